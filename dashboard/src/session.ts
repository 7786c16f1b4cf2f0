import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { api, type Session, setCsrfToken } from "./api.ts";

export interface SessionState {
  session: Session;
  /** Takes a session the server answered with (sign-in, acceptance) or asks for it again. */
  update(session?: Session): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error("useSession needs the SessionContext provider of App");
  return state;
}

/** GET /session: always 200; also sets the signed-out CSRF cookie the sign-in calls need. */
export async function readSession(): Promise<Session> {
  const { data, error } = await api.GET("/session");
  if (!data) throw new Error(error ? JSON.stringify(error) : "no session answer");
  setCsrfToken(data.csrf_token);
  return data;
}

export function canChange(session: Session): boolean {
  return session.member?.role === "owner" || session.member?.role === "developer";
}

export function isOwner(session: Session): boolean {
  return session.member?.role === "owner";
}
