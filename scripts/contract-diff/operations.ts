import { type Change, child, type Writer } from "./changes.ts";
import { deref } from "./refs.ts";
import { compareSchema } from "./schema.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

type Doc = Record<string, any>;

interface OperationScope {
  oldDoc: Doc;
  newDoc: Doc;
  where: string;
  pointer: string;
  /** Who sends the request: the client for paths; the server for webhooks, where the client answers. */
  caller: Writer;
  /** What requests and responses are called in messages (a webhook's are a delivery and the receiver's answer). */
  sides: { request: string; response: string };
  out: Change[];
}

/**
 * Every difference a client can see between two bundled contracts, walked from the operations and
 * webhooks (a component nothing uses cannot break anyone). Paths match by their shape, so renaming
 * a path parameter is not a removal.
 */
export function compareContracts(oldDoc: Doc, newDoc: Doc): Change[] {
  const out: Change[] = [];
  const shape = (template: string) => template.replace(/\{[^}]*\}/g, "{}");
  const newByShape = new Map(Object.keys(newDoc.paths ?? {}).map((template) => [shape(template), template]));
  const oldShapes = new Set(Object.keys(oldDoc.paths ?? {}).map(shape));
  for (const [template, oldItem] of Object.entries<Doc>(oldDoc.paths ?? {})) {
    const newTemplate = newByShape.get(shape(template));
    const pointer = child("/paths", newTemplate ?? template);
    if (newTemplate === undefined) {
      out.push({ severity: "breaking", where: template, pointer, message: "path removed" });
      continue;
    }
    const newItem = deref(newDoc, newDoc.paths[newTemplate]).node as Doc;
    compareItem(out, oldDoc, newDoc, deref(oldDoc, oldItem).node as Doc, newItem, { pointer, label: (method) => `${method.toUpperCase()} ${newTemplate}`, caller: "client", templates: [template, newTemplate] });
  }
  for (const template of Object.keys(newDoc.paths ?? {}).filter((template) => !oldShapes.has(shape(template)))) {
    out.push({ severity: "compatible", where: template, pointer: child("/paths", template), message: "path added" });
  }
  for (const [name, oldItem] of Object.entries<Doc>(oldDoc.webhooks ?? {})) {
    const pointer = child("/webhooks", name);
    if (!newDoc.webhooks?.[name]) {
      out.push({ severity: "breaking", where: `webhook ${name}`, pointer, message: "webhook removed: subscribers stop receiving it" });
      continue;
    }
    compareItem(out, oldDoc, newDoc, deref(oldDoc, oldItem).node as Doc, deref(newDoc, newDoc.webhooks[name]).node as Doc, { pointer, label: () => `webhook ${name}`, caller: "server", templates: ["", ""] });
  }
  for (const name of Object.keys(newDoc.webhooks ?? {}).filter((name) => !oldDoc.webhooks?.[name])) {
    out.push({ severity: "compatible", where: `webhook ${name}`, pointer: child("/webhooks", name), message: "webhook added" });
  }
  return out;
}

function compareItem(out: Change[], oldDoc: Doc, newDoc: Doc, oldItem: Doc, newItem: Doc, item: { pointer: string; label: (method: string) => string; caller: Writer; templates: [string, string] }): void {
  const sides = item.caller === "client" ? { request: "request", response: "response" } : { request: "delivery", response: "receiver's answer" };
  for (const method of METHODS) {
    const [before, after] = [oldItem[method], newItem[method]];
    const scope: OperationScope = { oldDoc, newDoc, where: item.label(method), pointer: child(item.pointer, method), caller: item.caller, sides, out };
    if (before && !after) out.push({ severity: "breaking", where: scope.where, pointer: scope.pointer, message: "operation removed" });
    else if (!before && after) out.push({ severity: "compatible", where: scope.where, pointer: scope.pointer, message: "operation added" });
    else if (before && after) {
      if (!before.deprecated && after.deprecated) out.push({ severity: "compatible", where: scope.where, pointer: child(scope.pointer, "deprecated"), message: "operation deprecated" });
      if (item.caller === "client") compareSecurity(scope, before, after);
      const listed = (pathItem: Doc, operation: Doc) => [
        ...(pathItem.parameters ?? []).map((node: unknown, index: number) => ({ node, pointer: child(child(item.pointer, "parameters"), index) })),
        ...(operation.parameters ?? []).map((node: unknown, index: number) => ({ node, pointer: child(child(scope.pointer, "parameters"), index) })),
      ];
      compareParameters(scope, listed(oldItem, before), listed(newItem, after), item.templates);
      compareRequestBody(scope, before.requestBody, after.requestBody);
      compareResponses(scope, before.responses ?? {}, after.responses ?? {});
    }
  }
}

/** How a client may authenticate: each alternative as "scheme[scopes]+…", or "no credentials". */
function securityOptions(doc: Doc, operation: Doc): Set<string> {
  const requirements: Array<Record<string, string[]>> = operation.security ?? doc.security ?? [];
  const options = requirements.map((requirement) =>
    Object.keys(requirement).length === 0
      ? "no credentials"
      : Object.entries(requirement)
          .map(([scheme, scopes]) => `${scheme}[${[...scopes].sort().join(",")}]`)
          .sort()
          .join("+"),
  );
  return new Set(options.length ? options : ["no credentials"]);
}

function compareSecurity(scope: OperationScope, before: Doc, after: Doc): void {
  const [had, has] = [securityOptions(scope.oldDoc, before), securityOptions(scope.newDoc, after)];
  for (const option of had) {
    if (!has.has(option)) scope.out.push({ severity: "breaking", where: scope.where, pointer: child(scope.pointer, "security"), message: `authentication by ${option} no longer accepted` });
  }
  for (const option of has) {
    if (!had.has(option)) scope.out.push({ severity: "compatible", where: scope.where, pointer: child(scope.pointer, "security"), message: `authentication by ${option} now accepted` });
  }
  const [wasScope, isScope] = [before["x-required-scope"], after["x-required-scope"]];
  if (isScope !== undefined && wasScope !== isScope) {
    scope.out.push({ severity: "breaking", where: scope.where, pointer: child(scope.pointer, "x-required-scope"), message: `required scope changed from ${wasScope ?? "none"} to ${isScope}: keys without it are refused` });
  }
}

/**
 * Parameters by location and name (header names case-insensitive); path parameters by position
 * in the template, since their names are not on the wire. Operation parameters override the path
 * item's.
 */
function parameterMap(doc: Doc, list: Listed[], template: string): Map<string, { parameter: Doc; pointer: string }> {
  const pathNames = [...template.matchAll(/\{([^}]*)\}/g)].map((match) => match[1]);
  const map = new Map<string, { parameter: Doc; pointer: string }>();
  for (const { node, pointer } of list) {
    const parameter = deref(doc, node).node as Doc;
    const position = pathNames.indexOf(parameter.name);
    const key = parameter.in === "path" && position >= 0 ? `path #${position + 1}` : `${parameter.in} ${parameter.in === "header" ? String(parameter.name).toLowerCase() : parameter.name}`;
    map.set(key, { parameter, pointer });
  }
  return map;
}

type Listed = { node: unknown; pointer: string };

function compareParameters(scope: OperationScope, oldList: Listed[], newList: Listed[], [oldTemplate, newTemplate]: [string, string]): void {
  const before = parameterMap(scope.oldDoc, oldList, oldTemplate);
  const after = parameterMap(scope.newDoc, newList, newTemplate);
  const pointers = new Map<Doc, string>([...before.values(), ...after.values()].map(({ parameter, pointer }) => [parameter, pointer]));
  const at = (parameter: Doc) => pointers.get(parameter)!;
  const name = (parameter: Doc) => `${parameter.in} parameter ${parameter.name}`;
  for (const [key, { parameter: old }] of before) {
    const current = after.get(key)?.parameter;
    if (!current) {
      scope.out.push({ severity: "breaking", where: scope.where, pointer: at(old), message: `${name(old)} removed` });
      continue;
    }
    if (Boolean(old.required) !== Boolean(current.required)) {
      // A parameter the caller must now send breaks callers; one no longer always sent breaks readers.
      const breaking = scope.caller === "client" ? Boolean(current.required) : Boolean(old.required);
      scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: at(current), message: `${name(current)} ${current.required ? "now required" : "now optional"}` });
    }
    for (const key of ["style", "explode", "allowReserved"] as const) {
      if (old[key] !== current[key]) scope.out.push({ severity: "breaking", where: scope.where, pointer: child(at(current), key), message: `${name(current)}: ${key} changed from ${old[key] ?? "default"} to ${current[key] ?? "default"}` });
    }
    compareSchema({ ...scope, writer: scope.caller, side: scope.sides.request, errorResponse: false }, old.schema, current.schema, child(at(current), "schema"));
    compareContent(scope, scope.caller, false, old.content, current.content, at(current));
  }
  for (const [key, { parameter }] of after) {
    if (before.has(key)) continue;
    const breaking = scope.caller === "client" && Boolean(parameter.required);
    scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: at(parameter), message: `${parameter.required ? "required" : "optional"} ${name(parameter)} added` });
  }
}

function compareRequestBody(scope: OperationScope, oldNode: unknown, newNode: unknown): void {
  const pointer = child(scope.pointer, "requestBody");
  const before = deref(scope.oldDoc, oldNode).node as Doc | undefined;
  const after = deref(scope.newDoc, newNode).node as Doc | undefined;
  if (!before && !after) return;
  if (!after) {
    scope.out.push({ severity: "breaking", where: scope.where, pointer, message: "request body removed" });
    return;
  }
  if (!before) {
    const breaking = scope.caller === "client" && Boolean(after.required);
    scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer, message: `${after.required ? "required" : "optional"} request body added` });
  } else if (Boolean(before.required) !== Boolean(after.required)) {
    const breaking = scope.caller === "client" ? Boolean(after.required) : Boolean(before.required);
    scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: child(pointer, "required"), message: `request body ${after.required ? "now required" : "now optional"}` });
  }
  compareContent(scope, scope.caller, false, before?.content, after.content, pointer);
}

/** Media types: one removed breaks (a client sends or reads it); one added does not. */
function compareContent(scope: OperationScope, writer: Writer, errorResponse: boolean, oldContent: Doc | undefined, newContent: Doc | undefined, pointer: string): void {
  const side = writer === scope.caller ? scope.sides.request : scope.sides.response;
  if (!oldContent && !newContent) return;
  const before = oldContent ?? {};
  const after = newContent ?? {};
  for (const [mediaType, media] of Object.entries<Doc>(before)) {
    const at = child(child(pointer, "content"), mediaType);
    if (!after[mediaType]) scope.out.push({ severity: "breaking", where: scope.where, pointer: at, message: `media type ${mediaType} removed` });
    else compareSchema({ ...scope, writer, side, errorResponse }, media.schema, after[mediaType].schema, child(at, "schema"));
  }
  for (const mediaType of Object.keys(after).filter((mediaType) => !before[mediaType])) {
    scope.out.push({ severity: "compatible", where: scope.where, pointer: child(child(pointer, "content"), mediaType), message: `media type ${mediaType} added` });
  }
}

function isError(status: string): boolean {
  return status === "default" || /^[45]/.test(status);
}

function compareResponses(scope: OperationScope, before: Doc, after: Doc): void {
  const writer: Writer = scope.caller === "client" ? "server" : "client";
  const responses = child(scope.pointer, "responses");
  for (const [status, oldNode] of Object.entries(before)) {
    const at = child(responses, status);
    if (!(status in after)) {
      scope.out.push({ severity: "breaking", where: scope.where, pointer: at, message: `response ${status} removed` });
      continue;
    }
    const old = deref(scope.oldDoc, oldNode).node as Doc;
    const current = deref(scope.newDoc, after[status]).node as Doc;
    compareHeaders(scope, writer, old.headers ?? {}, current.headers ?? {}, at);
    compareContent(scope, writer, isError(status), old.content, current.content, at);
  }
  for (const status of Object.keys(after).filter((status) => !(status in before))) {
    // A new error status carries the error envelope and new codes, which clients are told to
    // expect; a new success status is an answer a client written for the old ones does not handle.
    const breaking = writer === "server" && !isError(status);
    scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: child(responses, status), message: `response ${status} added${breaking ? ": clients do not expect this success status" : ""}` });
  }
}

function compareHeaders(scope: OperationScope, writer: Writer, before: Doc, after: Doc, pointer: string): void {
  const lower = (headers: Doc) => new Map(Object.entries(headers).map(([name, header]) => [name.toLowerCase(), { name, header }]));
  const [had, has] = [lower(before), lower(after)];
  for (const [key, { name, header }] of had) {
    const at = child(child(pointer, "headers"), name);
    const found = has.get(key);
    if (!found) {
      scope.out.push({ severity: "breaking", where: scope.where, pointer: at, message: `response header ${name} removed` });
      continue;
    }
    const old = deref(scope.oldDoc, header).node as Doc;
    const current = deref(scope.newDoc, found.header).node as Doc;
    if (Boolean(old.required) !== Boolean(current.required)) {
      const breaking = writer === "server" ? Boolean(old.required) : Boolean(current.required);
      scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: at, message: `response header ${name} ${current.required ? "now required" : "no longer always sent"}` });
    }
    compareSchema({ ...scope, writer, side: scope.sides.response, errorResponse: false }, old.schema, current.schema, child(child(child(pointer, "headers"), found.name), "schema"));
  }
  for (const [key, { name, header }] of has) {
    if (had.has(key)) continue;
    const required = Boolean((deref(scope.newDoc, header).node as Doc).required);
    const breaking = writer === "client" && required;
    scope.out.push({ severity: breaking ? "breaking" : "compatible", where: scope.where, pointer: child(child(pointer, "headers"), name), message: `response header ${name} added` });
  }
}
