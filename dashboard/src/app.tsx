import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, messageOf, type Session, setCsrfToken, whenSignedOut } from "./api.ts";
import { Link } from "./components/link.tsx";
import { ErrorNote, Loading } from "./components/notes.tsx";
import { AnalyticsPage } from "./pages/analytics.tsx";
import { AuditLogPage } from "./pages/audit-log.tsx";
import { InvitationPage } from "./pages/invitation.tsx";
import { PasswordResetPage } from "./pages/password-reset.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { LogsPage } from "./pages/logs.tsx";
import { MembersPage } from "./pages/members.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { SecurityPage } from "./pages/security.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import { StreamsPage } from "./pages/streams.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import {
  type AccountPage,
  accountPath,
  type ModePage,
  modePath,
  navigate,
  type Route,
  switchModePath,
  useRoute,
} from "./route.ts";
import { isOwner, readSession, SessionContext, type SessionState, useSession } from "./session.ts";

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const state = useMemo<SessionState | null>(
    () =>
      session && {
        session,
        async update(next) {
          if (next) setCsrfToken(next.csrf_token);
          setSession(next ?? (await readSession()));
        },
      },
    [session],
  );

  useEffect(() => {
    readSession().then(setSession, (error: unknown) => setFailure(messageOf(error)));
    // A 401 on any call: the session expired or was revoked elsewhere.
    whenSignedOut(() => readSession().then(setSession, () => undefined));
  }, []);

  if (failure) return <ErrorNote message={`The dashboard could not start: ${failure}`} />;
  if (!state) return <Loading what="the dashboard" />;
  return (
    <SessionContext.Provider value={state}>
      <Pages route={route} session={state.session} />
    </SessionContext.Provider>
  );
}

function Pages({ route, session }: { route: Route; session: Session }) {
  if (route.page === "invitation") return <InvitationPage />;
  if (route.page === "reset") return <PasswordResetPage />;
  if (!session.signed_in) {
    if (route.page === "sign-in") return <SignInPage />;
    return <Redirect to={`/dashboard/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} />;
  }
  if (route.page === "sign-in") return <Redirect to={modePath("test", "overview")} />;
  return (
    <Shell route={route} session={session}>
      <Page route={route} />
    </Shell>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "overview":
      return <OverviewPage mode={route.mode} />;
    case "keys":
      return <KeysPage mode={route.mode} />;
    case "webhooks":
      return <WebhooksPage mode={route.mode} webhookId={route.id} />;
    case "streams":
      return <StreamsPage mode={route.mode} streamId={route.id} />;
    case "analytics":
      return <AnalyticsPage mode={route.mode} />;
    case "logs":
      return <LogsPage mode={route.mode} requestId={route.id} />;
    case "members":
      return <MembersPage />;
    case "audit-log":
      return <AuditLogPage />;
    case "security":
      return <SecurityPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            There is no such page. <Link href={modePath("test", "overview")}>Go to the overview</Link>.
          </p>
        </>
      );
  }
}

/** The side navigation's links, in order; the audit log only for owners (the server refuses others). */
const MODE_LINKS: Array<[ModePage, string]> = [
  ["overview", "Overview"],
  ["keys", "API keys"],
  ["webhooks", "Webhooks"],
  ["streams", "Streams"],
  ["analytics", "Analytics"],
  ["logs", "Logs"],
];
const ACCOUNT_LINKS: Array<[AccountPage, string]> = [
  ["members", "Members"],
  ["audit-log", "Audit log"],
  ["security", "Security"],
];

function Shell({ route, session, children }: { route: Route; session: Session; children: preact.ComponentChildren }) {
  const mode = "mode" in route ? route.mode : "test";
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // On a phone the navigation is behind a Menu button (styles.css); a page change closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    setMenuOpen(false);
    // After a page change, start reading (and tabbing) at the new page, as a full load would.
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [location.pathname]);
  const { update } = useSession();
  const signOut = async () => {
    await api.DELETE("/session").catch(() => undefined);
    await update();
  };
  const brand = session.brand;
  const on = (page: string) => route.page === page;
  return (
    <div class={`shell mode-${mode}`}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <button
          type="button"
          class="secondary menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="dashboard-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <span class="brand-name">{brand?.name ?? "Dashboard"}</span>
        <button
          type="button"
          role="switch"
          class="mode-switch"
          aria-checked={mode === "test"}
          onClick={() => navigate(switchModePath(route, mode === "test" ? "live" : "test"))}
        >
          <span class="track" aria-hidden="true">
            <span class="thumb" />
          </span>
          Test mode
        </button>
        <span class="who">
          {session.member?.email} ({session.member?.role})
        </span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      {mode === "test" && (
        <p class="test-banner" role="note">
          Test data: streams are simulated and cost nothing.
        </p>
      )}
      <nav id="dashboard-nav" class={menuOpen ? "side open" : "side"} aria-label="Dashboard">
        <ul>
          {MODE_LINKS.map(([page, name]) => (
            <li key={page}>
              <Link href={modePath(mode, page)} current={on(page)}>
                {name}
              </Link>
            </li>
          ))}
        </ul>
        <ul>
          {ACCOUNT_LINKS.filter(([page]) => page !== "audit-log" || isOwner(session)).map(([page, name]) => (
            <li key={page}>
              <Link href={accountPath(page)} current={on(page)}>
                {name}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="content" ref={main} tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
