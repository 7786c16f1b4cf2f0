const dateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
const number = new Intl.NumberFormat("en-US");
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/** Times in UTC, as the API gives them, so what a member reads matches logs and API answers. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return `${dateTime.format(new Date(iso))} UTC`;
}

export function formatNumber(value: number): string {
  return number.format(value);
}

export function formatCents(cents: number): string {
  return money.format(cents / 100);
}
