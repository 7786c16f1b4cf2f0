import { describe, expect, it } from "vitest";
import { DomainError } from "../domain/errors.ts";
import { ERRORS } from "../errors.ts";
import { httpErrorOf } from "./domain-errors.ts";

describe("domain refusals on the wire", () => {
  it("answers a refusal without detail with its code's status and standard message", () => {
    const error = httpErrorOf(new DomainError("plan_minutes_used_up"));
    expect([error.status, error.code, error.message]).toEqual([402, "no_minutes", ERRORS.no_minutes.message]);
  });

  it("answers a refusal with detail with the domain's message", () => {
    const error = httpErrorOf(
      new DomainError("not_live", "Stream s is not live (status ended); only a live stream can be ended."),
    );
    expect(error.toBody()).toEqual({
      error: { code: "not_found", message: "Stream s is not live (status ended); only a live stream can be ended." },
    });
    expect(error.status).toBe(404);
  });
});
