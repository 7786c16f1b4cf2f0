import { describe, expect, it } from "vitest";
import { activeCreators, type Creator, creatorLabel } from "./creators.ts";

function creator(id: string, name: string, status: string | null): Creator {
  return {
    id,
    name,
    status,
    languages: ["en"],
    style: null,
    personality: null,
    vibe: null,
    consent: true,
    photo: null,
  };
}

describe("activeCreators", () => {
  it("offers the available creators only, by name and then id", () => {
    const list = [
      creator("avt_000000000003", "Zoe", "available"),
      creator("avt_000000000001", "Ana", "busy"),
      creator("avt_000000000004", "Ben", null),
      creator("avt_000000000006", "Cleo", "available"),
      creator("avt_000000000005", "Cleo", "available"),
    ];
    expect(activeCreators(list).map((one) => one.id)).toEqual([
      "avt_000000000005",
      "avt_000000000006",
      "avt_000000000003",
    ]);
  });

  it("leaves the list it was given as it was, and has nothing to offer when none is available", () => {
    const list = [creator("avt_000000000002", "Bo", "available"), creator("avt_000000000001", "Al", "available")];
    expect(activeCreators(list).map((one) => one.name)).toEqual(["Al", "Bo"]);
    expect(list.map((one) => one.name)).toEqual(["Bo", "Al"]);
    expect(activeCreators([creator("avt_000000000001", "Al", "busy")])).toEqual([]);
  });
});

describe("creatorLabel", () => {
  it("names the creator and the id the API takes", () => {
    expect(creatorLabel(creator("avt_Qfmm3FkkaQM0", "Alicia Jerde", "available"))).toBe(
      "Alicia Jerde (avt_Qfmm3FkkaQM0)",
    );
  });
});
