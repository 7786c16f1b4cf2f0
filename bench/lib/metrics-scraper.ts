/**
 * Scrapes a server's GET /metrics every `intervalMs`, as a Prometheus server would (15 s is the
 * usual scrape interval), so a measured server also pays for collecting its metrics. Returns a
 * function that stops it; a scrape that fails is counted, never thrown.
 */
export function scrapeMetrics(url: string, token: string, intervalMs = 15_000): { stop(): void; failed(): number } {
  let failed = 0;
  const scrape = () =>
    fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      .then((response) => {
        if (!response.ok) failed++;
        return response.arrayBuffer();
      })
      .catch(() => failed++);
  void scrape();
  const timer = setInterval(scrape, intervalMs);
  return { stop: () => clearInterval(timer), failed: () => failed };
}
