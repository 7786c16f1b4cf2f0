/**
 * Made the stock creator catalogue once (server/data/creators.json), with a fixed seed so a rerun
 * gives the same file. The JSON is the committed source; this script is kept to show its origin.
 * Usage: npx tsx scripts/make-creators.ts
 */
import { writeFileSync } from "node:fs";
import { faker } from "@faker-js/faker";

faker.seed(20260807);

const STYLES = ["energetic", "calm", "witty", "expert", "glamorous", "casual"];
const PERSONALITIES = [
  "warm and chatty",
  "sharp and analytical",
  "playful",
  "confident closer",
  "storyteller",
  "laid-back",
];
const VIBES = ["studio", "streetwear", "luxury", "gaming den", "cosy living room", "neon arcade"];
const LANGUAGES = ["en", "es", "pt", "de", "fr", "it", "ja", "ko", "tr", "pl"];

const creators = Array.from({ length: 16 }, (_, index) => {
  const name = `${faker.person.firstName()} ${faker.person.lastName()}`;
  const id = `avt_${faker.string.alphanumeric({ length: 12, casing: "mixed" })}`;
  // A few creators carry nulls, as the catalogue allows, so clients meet them in the sandbox too.
  const sparse = index % 7 === 6;
  return {
    id,
    name,
    status: sparse ? null : faker.helpers.arrayElement(["available", "available", "available", "busy"]),
    languages: faker.helpers.arrayElements(LANGUAGES, { min: 1, max: 3 }),
    style: sparse ? null : faker.helpers.arrayElement(STYLES),
    personality: faker.helpers.arrayElement(PERSONALITIES),
    vibe: sparse ? null : faker.helpers.arrayElement(VIBES),
    consent: sparse ? null : true,
    photo: sparse ? null : `https://cdn.livestream.example/avatars/${id}.png`,
  };
}).sort((a, b) => a.name.localeCompare(b.name, "en"));

writeFileSync(new URL("../server/data/creators.json", import.meta.url), JSON.stringify(creators, null, 2) + "\n");
console.log(`wrote ${creators.length} creators`);
