import { loadBuiltContract } from "/work/main/contract/built.ts";
import { compileSchema } from "/work/main/contract/schemas.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
const contract = loadBuiltContract();
const op = contract.operations.byId("listStreams");
const resp: any = op.responses.get(200);
const schema = resp.content["application/json"].schema;
const example = resp.content["application/json"].examples.page.value;
const one = example.streams[0];
const page = { ...example, streams: Array.from({ length: 20 }, (_, i) => ({ ...one, id: one.id.slice(0, -2) + String(i).padStart(2, "0") })), total: 20 };
const full = compileSchema(schema);
const fastAjv = new Ajv2020({ strict: false, validateSchema: false }); addFormats.default(fastAjv, { mode: "fast" });
const fast = fastAjv.compile(schema);
const noFmt = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false }).compile(schema);
function time(name: string, fn: () => unknown) {
  for (let i = 0; i < 20000; i++) fn();
  const t = process.hrtime.bigint(); const N = 50000;
  for (let i = 0; i < N; i++) fn();
  console.log(name, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(2), "µs");
}
console.log(full(page), fast(page), noFmt(page));
time("full formats", () => full(page));
time("fast formats", () => fast(page));
time("no formats", () => noFmt(page));
time("JSON.stringify", () => JSON.stringify(page));
import { fastFormats, fullFormats } from "ajv-formats/dist/formats.js";
for (const name of ["date-time", "uuid", "uri", "date", "time"]) {
  const a = new Ajv2020({ strict: false, validateSchema: false }); addFormats.default(a, { mode: "full" });
  a.addFormat(name, (fastFormats as any)[name]);
  for (const f of ["int32", "int64"]) a.addFormat(f, { type: "number", validate: (n: number) => Number.isInteger(n) });
  const v = a.compile(schema);
  time(`full but fast ${name}`, () => v(page));
}
const dt = (fullFormats as any)["date-time"];
const fn = typeof dt === "function" ? dt : dt.validate;
time("one full date-time", () => fn("2026-11-20T14:03:15.912Z"));

const fd = (fullFormats as any).date; const ft = (fullFormats as any).time;
const dateFn = typeof fd === "function" ? fd : fd.validate; const timeFn = typeof ft === "function" ? ft : ft.validate;
const SEP = /[t\s]/i;
function dateTime(v: string) { return v.length > 11 && SEP.test(v[10]!) && dateFn(v.slice(0, 10)) && timeFn(v.slice(11)); }
time("index date-time", () => dateTime("2026-11-20T14:03:15.912Z"));
time("date only", () => dateFn("2026-11-20"));
time("time only", () => timeFn("14:03:15.912Z"));
time("split", () => "2026-11-20T14:03:15.912Z".split(/t|\s/i));
const a = new Ajv2020({ strict: false, validateSchema: false }); addFormats.default(a, { mode: "full" });
a.addFormat("date-time", { type: "string", validate: dateTime });
for (const f of ["int32", "int64"]) a.addFormat(f, { type: "number", validate: (n: number) => Number.isInteger(n) });
const v = a.compile(schema);
time("page with index date-time", () => v(page));
