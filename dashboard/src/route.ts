import { useEffect, useState } from "preact/hooks";
import type { Mode } from "./api.ts";

export const BASE = "/dashboard";

/** Pages shown per mode (test or live data), under /dashboard/<mode>/<page>. */
export const MODE_PAGES = ["overview", "keys", "webhooks", "streams", "analytics", "logs"] as const;
/** Pages about the brand's people and the member's own account: the same in both modes. */
export const ACCOUNT_PAGES = ["members", "audit-log", "security"] as const;

export type ModePage = (typeof MODE_PAGES)[number];
export type AccountPage = (typeof ACCOUNT_PAGES)[number];

export type Route =
  | { page: "sign-in" }
  | { page: "invitation" }
  | { page: "reset" }
  | { page: ModePage; mode: Mode; id?: string }
  | { page: AccountPage; mode: Mode }
  | { page: "not-found"; mode: Mode };

let lastMode: Mode = "test";

/** The route of a path below /dashboard: /test/keys, /live/streams/<id>, /members, /sign-in. */
export function parseRoute(pathname: string): Route {
  const parts = pathname.slice(BASE.length).split("/").filter(Boolean).map(decodeURIComponent);
  const [first, second, third] = parts;
  if (first === "sign-in") return { page: "sign-in" };
  if (first === "invitation") return { page: "invitation" };
  if (first === "reset") return { page: "reset" };
  if (first === "test" || first === "live") {
    lastMode = first;
    const page = (second ?? "overview") as ModePage;
    if (!MODE_PAGES.includes(page)) return { page: "not-found", mode: first };
    return third ? { page, mode: first, id: third } : { page, mode: first };
  }
  if (first === undefined) return { page: "overview", mode: lastMode };
  if ((ACCOUNT_PAGES as readonly string[]).includes(first)) return { page: first as AccountPage, mode: lastMode };
  return { page: "not-found", mode: lastMode };
}

export function modePath(mode: Mode, page: ModePage, id?: string): string {
  return `${BASE}/${mode}/${page}${id ? `/${encodeURIComponent(id)}` : ""}`;
}

export function accountPath(page: AccountPage): string {
  return `${BASE}/${page}`;
}

/** The same page in the other mode; a detail page goes back to its list (ids belong to one mode). */
export function switchModePath(route: Route, mode: Mode): string {
  if ("mode" in route && (MODE_PAGES as readonly string[]).includes(route.page))
    return modePath(mode, route.page as ModePage);
  lastMode = mode;
  return route.page === "sign-in" || route.page === "invitation" || route.page === "reset"
    ? modePath(mode, "overview")
    : `${BASE}/${route.page}`;
}

const CHANGE = "dashboard:navigate";

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current route, following links, back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return route;
}

/**
 * The page's query (`?offset=20&status=ended`): a list's page and filters live in the address,
 * so Back from a detail, a reload or a shared link shows the same page. Changes replace the
 * history entry rather than add one: Back leaves the list, as it would a page read top to bottom.
 */
export function useQuery(): [URLSearchParams, (changes: Record<string, string | number | null>) => void] {
  const [search, setSearch] = useState(() => location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  const set = (changes: Record<string, string | number | null>) => {
    const next = new URLSearchParams(location.search);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null || value === "" || value === 0) next.delete(name);
      else next.set(name, String(value));
    }
    const query = next.toString();
    navigate(`${location.pathname}${query ? `?${query}` : ""}`, { replace: true });
  };
  return [new URLSearchParams(search), set];
}
