// The dashboard's authorization is the contract's: each operation's `x-required-role` and
// `security` decide who may call it, with no table in code. Changing a role in the contract alone
// changes what the server allows; a contract that leaves an operation's access unstated is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBuiltContract } from "../../contract/built.ts";
import { indexContract, type Json } from "../../contract/indexed.ts";
import { browser, member } from "../../testkit/dashboard-browser.ts";
import { startTestServer, type TestServer } from "../../testkit/harness.ts";

/** The built contract with `edit` applied to a copy of its dereferenced document. */
function editedContract(edit: (operations: Map<string, Json>) => void) {
  const dereferenced = structuredClone(loadBuiltContract().dereferenced) as Json;
  const operations = new Map<string, Json>();
  for (const item of Object.values<Json>(dereferenced.paths))
    for (const operation of Object.values<Json>(item))
      if (typeof operation?.operationId === "string") operations.set(operation.operationId, operation);
  edit(operations);
  return () => indexContract("edited openapi.yaml", dereferenced);
}

describe("dashboard roles, as the contract states them", () => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    // The key list is open to viewers in openapi.yaml; this server's contract makes it owner-only.
    const contract = editedContract((operations) => {
      operations.get("dashboardListKeys")!["x-required-role"] = "owner";
    })();
    server = await startTestServer({ contract });
    brandId = (await server.brand()).id;
  });
  afterAll(() => server?.close());

  it("refuses a viewer and a developer on an operation the contract alone made owner-only", async () => {
    for (const role of ["viewer", "developer"]) {
      const refused = await (await member(server, brandId, `${role}@example.com`, role)).send(
        "GET",
        "/modes/test/keys",
      );
      expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"]);
      expect(refused.body.error.message).toContain("needs owner");
    }
    const owner = await member(server, brandId, "owner@example.com", "owner");
    expect((await owner.send("GET", "/modes/test/keys")).status).toBe(200);
    // Signed out, it is still a 401 first.
    const stranger = browser(server);
    expect((await stranger.send("GET", "/modes/test/keys")).status).toBe(401);
  });

  it("refuses a contract with a signed-in operation that names no role, or a changing one without CSRF", () => {
    const noRole = editedContract((operations) => {
      delete operations.get("dashboardRevokeKey")!["x-required-role"];
    });
    expect(noRole).toThrow(/dashboardRevokeKey\) takes the session but its x-required-role is not one of/);
    const unknownRole = editedContract((operations) => {
      operations.get("dashboardListKeys")!["x-required-role"] = "admin";
    });
    expect(unknownRole).toThrow(/dashboardListKeys\) takes the session/);
    const noCsrf = editedContract((operations) => {
      operations.get("dashboardCreateKey")!.security = [{ dashboardSession: [] }];
    });
    expect(noCsrf).toThrow(/dashboardCreateKey\) changes something, so its security must name dashboardCsrf/);
    const roleWhileSignedOut = editedContract((operations) => {
      operations.get("dashboardSignIn")!["x-required-role"] = "viewer";
    });
    expect(roleWhileSignedOut).toThrow(/open without a session, so it takes no x-required-role/);
    const roleOnPublic = editedContract((operations) => {
      operations.get("listStreams")!["x-required-role"] = "viewer";
    });
    expect(roleOnPublic).toThrow(/x-required-role outside the dashboard API/);
  });
});
