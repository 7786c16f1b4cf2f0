/**
 * What a client (or a proxy, or an attacker) does to a request besides its body: headers that are
 * wrong, repeated or odd, and framing that lies (Content-Length, chunked encoding, the method,
 * the version). Each is a Mutation of a draft (drafts.ts).
 */
import fc from "fast-check";
import { type Draft, mutate, type Mutation, headersWith } from "./drafts.ts";

const add = (name: string, value: string): Mutation =>
  mutate(`${name}: ${value.length > 40 ? `${value.slice(0, 40)}… (${value.length})` : value}`, (draft) => ({
    headers: [...draft.headers, [name, value]],
  }));
const replace = (name: string, value: string): Mutation =>
  mutate(`${name}: ${value.slice(0, 40)}`, (draft) => ({ headers: headersWith(draft, name, value) }));

/** Header values of the documented form (a UUID for Idempotency-Key, `[A-Za-z0-9._:-]` for X-Request-Id). */
const idempotencyKey = fc.uuid();
const requestId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/);

/** Values outside the form: empty, spaces, too long, characters outside visible ASCII. */
const badToken = fc.oneof(
  fc.constantFrom("", " ", "a b", "x".repeat(256), "x".repeat(129), "<script>", "'; DROP TABLE x;--", "\t", "é"),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips what a header cannot carry
  fc.string({ maxLength: 20 }).map((value) => value.replace(/[\x00-\x1f\x7f]/g, "")),
);

/** Headers a client sends that change nothing the contract describes, or must change nothing. */
export const headerMutations: fc.Arbitrary<Mutation> = fc.oneof(
  idempotencyKey.map((key) => replace("Idempotency-Key", key)),
  badToken.map((key) => replace("Idempotency-Key", key)),
  fc.tuple(idempotencyKey, idempotencyKey).map(([a, b]) =>
    mutate("two Idempotency-Keys", (draft) => ({
      headers: [...headersWith(draft, "Idempotency-Key", a), ["Idempotency-Key", b]],
    })),
  ),
  requestId.map((id) => replace("X-Request-Id", id)),
  badToken.map((id) => replace("X-Request-Id", id)),
  fc.tuple(requestId, requestId).map(([a, b]) =>
    mutate("two X-Request-Ids", (draft) => ({
      headers: [...headersWith(draft, "X-Request-Id", a), ["X-Request-Id", b]],
    })),
  ),
  fc
    .constantFrom("text/plain", "application/xml", "application/json; charset=latin1")
    .map((type) => add("Content-Type", type)),
  fc
    .constantFrom("text/html", "application/xml", "", "*/*;q=0", "application/json;q=0", "image/png")
    .map((accept) => add("Accept", accept)),
  fc
    .constantFrom("gzip", "br", "identity;q=0", "*;q=0", "compress, x-unknown")
    .map((encoding) => add("Accept-Encoding", encoding)),
  fc.constantFrom("iso-8859-1", "utf-16;q=1, *;q=0").map((charset) => add("Accept-Charset", charset)),
  fc
    .constantFrom("gzip", "deflate", "br", "identity", "x-unknown")
    .map((encoding) => add("Content-Encoding", encoding)),
  fc.constantFrom("DELETE", "PATCH", "GET", "PUT").map((method) => add("X-HTTP-Method-Override", method)),
  fc.constantFrom("https://evil.example", "null").map((origin) => add("Origin", origin)),
  fc
    .constantFrom("1.2.3.4", "not-an-address", "127.0.0.1, 10.0.0.1", "::1")
    .map((address) => add("X-Forwarded-For", address)),
  fc.constantFrom("evil.example", "").map((host) => add("X-Forwarded-Host", host)),
  fc.constant(add("Forwarded", 'for="_gazonk"; proto=http; by=unknown')),
  fc.constantFrom("close", "keep-alive", "TE", "Upgrade, HTTP2-Settings").map((value) => replace("Connection", value)),
  fc.constantFrom("websocket", "h2c", "TLS/1.2, HTTP/1.1").map((protocol) =>
    mutate(`Upgrade: ${protocol}`, (draft) => ({
      headers: [...headersWith(draft, "Connection", "Upgrade"), ["Upgrade", protocol]],
    })),
  ),
  fc.constant(add("Expect", "100-continue")),
  fc.constant(add("TE", "trailers")),
  fc.constantFrom("bytes=0-0", "bytes=-1", "bytes=5-1", "lines=1-2").map((range) => add("Range", range)),
  fc.constant(add("Cookie", `session=${"c".repeat(4000)}`)),
  fc.integer({ min: 100, max: 8_000 }).map((length) => add("X-Long", "v".repeat(length))),
  fc.integer({ min: 50, max: 90 }).map((count) =>
    mutate(`${count} more headers`, (draft) => ({
      headers: [
        ...draft.headers,
        ...Array.from({ length: count }, (_, i): [string, string] => [`X-Fuzz-${i}`, String(i)]),
      ],
    })),
  ),
  fc.constant(add("X-!#$%&'*+-.^_`|~", "every token character in the name")),
  fc.constant(add("X-Empty", "")),
);

/**
 * The request's Host: odd values, with a port or without, that a server must not trip over. One
 * that is no host at all (a space in it) is refused by the transport, as RFC 9112 §3.2 requires.
 */
export const hostMutations: fc.Arbitrary<Mutation> = fc
  .constantFrom(
    "",
    "localhost",
    "127.0.0.1:1",
    "[::1]:8080",
    "evil.example:99999",
    "xn--e1afmkfd.example",
    "a".repeat(300),
    "host with space",
  )
  .map((host) => mutate(`Host: ${host.slice(0, 40)}`, () => ({ host: [host], transport: host.includes(" ") })));

/** A Content-Length value that is no length. */
const badLength = fc.constantFrom("abc", "-1", "1.0", "0x10", "+5", "1e3", "", "99999999999999999999999");

/**
 * Framing that lies. A mutation that makes the request one Node's parser refuses marks the draft
 * `transport` (400 in the envelope is then a right answer).
 */
export function framingMutations(): fc.Arbitrary<Mutation> {
  // Node parses nothing after the headers of a request that asks for an Upgrade it does not grant
  // (docs/operators.md), so broken framing is sent without one.
  const withoutUpgrade = (draft: Draft): Draft => ({
    ...draft,
    headers: draft.headers.filter(([name]) => !/^(upgrade|connection)$/i.test(name)),
  });
  const broken = (label: string, apply: (draft: Draft) => Partial<Draft>) =>
    mutate(label, (draft) => {
      const sent = withoutUpgrade(draft);
      return { headers: sent.headers, ...apply(sent), transport: true };
    });
  return fc.oneof(
    fc.constant(mutate("HTTP/1.0", () => ({ version: "HTTP/1.0" as const }))),
    fc.constant(mutate("HTTP/1.0 without Host", () => ({ version: "HTTP/1.0" as const, host: [] }))),
    fc
      .constantFrom("PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "PURGE", "SEARCH", "LINK", "REPORT")
      .map((method) => mutate(`method ${method}`, () => ({ method }))),
    fc
      .constantFrom("get", "Post", "FOO", "GETT", "BREW")
      .map((method) => broken(`method ${method}`, () => ({ method }))),
    badLength.map((length) => broken(`Content-Length: ${length}`, () => ({ length: [length] }))),
    fc.constant(
      broken("two different Content-Lengths", (draft) => ({
        length: [String(draft.body?.length ?? 0), String((draft.body?.length ?? 0) + 1)],
      })),
    ),
    // RFC 9112 lets a recipient accept or refuse these; Node refuses them.
    fc.constant(
      broken("two equal Content-Lengths", (draft) => ({
        length: [String(draft.body?.length ?? 0), String(draft.body?.length ?? 0)],
      })),
    ),
    // The rest of the body then reads as a request of its own, one that cannot parse (not a
    // blank line, which would only keep the connection waiting for a request).
    fc.nat().map((cut) =>
      broken("a Content-Length shorter than the body", (draft) => {
        const length = draft.body?.length ?? 0;
        return {
          length: [String(length === 0 ? 0 : cut % length)],
          trailing: Buffer.from("NOT-A-REQUEST\r\n\r\n"),
          untilClose: true,
        };
      }),
    ),
    fc
      .array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 6 })
      .map((sizes) => mutate(`chunked in ${sizes.join("+")}`, (draft) => ({ chunks: draft.body ? sizes : null }))),
    fc.constant(
      broken("chunked with a Content-Length too", (draft) => ({
        chunks: [8],
        length: [String(draft.body?.length ?? 0)],
      })),
    ),
    fc
      .constantFrom("zz\r\n", "-1\r\n", "ffffffffffffffffffff\r\n", "1\r\nabc\r\n", "1;\0\r\n", "0x1\r\n")
      .map((garbage) =>
        broken(`chunked garbage ${JSON.stringify(garbage)}`, (draft) => ({
          body: Buffer.from(garbage),
          chunks: null,
          length: [],
          headers: headersWith(draft, "Transfer-Encoding", "chunked"),
        })),
      ),
    fc.constantFrom("gzip, chunked", "chunked, chunked", "identity", "chunked;q=1", "xchunked").map((encoding) =>
      broken(`Transfer-Encoding: ${encoding}`, (draft) => ({
        headers: headersWith(draft, "Transfer-Encoding", encoding),
        chunks: null,
      })),
    ),
    // Announced over the limit and never sent in full: refused at once, on every route.
    fc
      .constantFrom(2_000_000, 10_000_000_000)
      .map((length) =>
        broken(`Content-Length: ${length}, body not sent`, () => ({ length: [String(length)], chunks: null })),
      ),
    fc.constant(broken("obs-fold header line", (draft) => ({ headers: [...draft.headers, ["X-Folded", "a\r\n b"]] }))),
    fc.constant(
      broken("a header line without a colon", (draft) => ({
        headers: [...draft.headers, ["X-Before", "1\r\nNo-Colon-Here"]],
      })),
    ),
  );
}

/** Authorization headers, from right to very wrong; `good` is the right one for the path. */
export function authorizations(good: string, others: readonly string[]): fc.Arbitrary<Mutation> {
  const set = (values: string[], label: string) =>
    mutate(label, (draft) => ({
      headers: [
        ...headersWith(draft, "Authorization", null),
        ...values.map((value): [string, string] => ["Authorization", value]),
      ],
    }));
  const wrong = fc.oneof(
    fc.constantFrom(
      "",
      "Bearer",
      "Bearer ",
      `bearer ${good}`,
      `Bearer  ${good}`,
      `Basic ${Buffer.from(`u:${good}`).toString("base64")}`,
      `Bearer ${good}x`,
      `Bearer ${good.slice(0, -1)}`,
      `Bearer ${"k".repeat(5000)}`,
    ),
    fc.constantFrom(...others).map((token) => `Bearer ${token}`),
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips what a header cannot carry
    fc.string({ maxLength: 40 }).map((value) => value.replace(/[\x00-\x1f\x7f]/g, "")),
  );
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(set([`Bearer ${good}`], "the right Authorization")) },
    fc.constant(set([], "no Authorization")),
    { weight: 2, arbitrary: wrong.map((value) => set([value], `Authorization: ${value.slice(0, 30)}`)) },
    wrong.map((value) => set([`Bearer ${good}`, value], "the right Authorization, then another")),
    wrong.map((value) => set([value, `Bearer ${good}`], "another Authorization, then the right one")),
  );
}
