import { describe, expect, it } from "vitest";
import type { Stream } from "../domain/types.ts";
import { webhookEvent } from "./webhook-event.ts";

describe("webhook event body", () => {
  it("is the contract's WebhookEvent with the stream's state after the transition, fields in the documented order", () => {
    const stream = {
      id: "0b9f5e4e-2b7a-4c1e-9d55-6f1f0f2b8a11",
      status: "ended",
      creatorPublicId: "avt_Qfmm3FkkaQM0",
      platform: "kick",
      vertical: "igaming",
    } as Stream;
    const body = webhookEvent({
      id: "evt_2b3c4d5e6f708192a3b4c5d6e7f80912",
      type: "stream.ended",
      stream,
      createdAt: new Date("2026-11-20T12:00:00.000Z"),
    });
    expect(JSON.stringify(body)).toBe(
      '{"id":"evt_2b3c4d5e6f708192a3b4c5d6e7f80912","type":"stream.ended","created_at":"2026-11-20T12:00:00.000Z",' +
        '"data":{"stream_id":"0b9f5e4e-2b7a-4c1e-9d55-6f1f0f2b8a11","status":"ended","creator_id":"avt_Qfmm3FkkaQM0","platform":"kick","vertical":"igaming"}}',
    );
  });
});
