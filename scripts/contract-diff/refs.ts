/** Follows local `$ref`s (the documents are bundled, so every one is `#/…`). */
export function deref(doc: Record<string, any>, node: unknown): { node: unknown; ref: string | null } {
  let current = node;
  let ref: string | null = null;
  const followed = new Set<string>();
  while (isRef(current) && !followed.has(current.$ref)) {
    const { $ref, ...siblings } = current;
    followed.add($ref);
    ref = $ref;
    const target = lookup(doc, $ref);
    // OpenAPI 3.1 lets a $ref carry siblings (a description, a narrower constraint): they apply too.
    current = Object.keys(siblings).length && typeof target === "object" && target !== null ? { ...target, ...siblings } : target;
  }
  return { node: current, ref };
}

function isRef(node: unknown): node is { $ref: string } {
  return typeof node === "object" && node !== null && typeof (node as { $ref?: unknown }).$ref === "string";
}

function lookup(doc: Record<string, any>, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`unresolved reference ${ref}: the contract was not bundled`);
  let node: unknown = doc;
  for (const token of ref.slice(2).split("/")) {
    const key = decodeURIComponent(token).replace(/~1/g, "/").replace(/~0/g, "~");
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
    if (node === undefined) throw new Error(`reference ${ref} points nowhere`);
  }
  return node;
}
