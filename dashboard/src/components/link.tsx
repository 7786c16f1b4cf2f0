import type { ComponentChildren } from "preact";
import { navigate } from "../route.ts";

/** An ordinary link (it opens in a new tab too) that changes page without reloading the app. */
export function Link({ href, children, current }: { href: string; children: ComponentChildren; current?: boolean }) {
  const follow = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={follow} aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}
