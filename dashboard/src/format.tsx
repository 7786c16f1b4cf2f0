/**
 * One locale for every date and number the app shows, tables and charts alike: the browser's
 * (`undefined` asks Intl for it). Times are in UTC, as the API gives them, to the second, so two
 * attempts 20 s apart read apart and what a member reads matches logs and API answers.
 */
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });
const number = new Intl.NumberFormat(undefined);
const money = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" });
const plural = new Intl.PluralRules("en");

export const dayFormat = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
export const hourFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return `${dateTime.format(new Date(iso))} UTC`;
}

/** A time as text, in a <time> carrying the full timestamp (also its tooltip). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <>—</>;
  return (
    <time dateTime={iso} title={iso}>
      {formatTime(iso)}
    </time>
  );
}

export function formatNumber(value: number): string {
  return number.format(value);
}

/** "1 stream", "2 streams": the count in the app's locale and the noun's English plural. */
export function countOf(value: number, one: string, other = `${one}s`): string {
  return `${formatNumber(value)} ${plural.select(value) === "one" ? one : other}`;
}

export function formatCents(cents: number): string {
  return money.format(cents / 100);
}

/** A length of time to the second: "45 s", "5 min 1 s", "1 h 2 min 3 s" (numbers in the app's locale). */
export function formatDuration(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const parts = [
    hours > 0 ? `${formatNumber(hours)} h` : "",
    hours > 0 || minutes > 0 ? `${formatNumber(minutes)} min` : "",
    `${formatNumber(seconds)} s`,
  ];
  return parts.filter(Boolean).join(" ");
}
