import { api, type Mode } from "../api.ts";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { formatCents, formatDuration, formatNumber, Time } from "../format.tsx";
import { useLoad } from "../hooks.ts";

function Meter({ label, used, limit }: { label: string; used: number; limit: number }) {
  return (
    <div class="meter">
      <span>
        {formatNumber(used)} of {formatNumber(limit)}
      </span>
      <progress max={Math.max(limit, 1)} value={Math.min(used, limit)} aria-label={label} />
    </div>
  );
}

/**
 * The brand at a glance: who it is, its money and minutes, and how close it is to its limits; in
 * test mode, its test clock (read-only).
 */
export function OverviewPage({ mode }: { mode: Mode }) {
  const overview = useLoad(() => api.GET("/modes/{mode}/overview", { params: { path: { mode } } }), [mode]);
  const data = overview.data;
  return (
    <>
      <h1>Overview</h1>
      <ErrorNote message={overview.error} />
      {!data && !overview.error && <Loading what="the overview" />}
      {data && (
        <div class="cards">
          <section class="card" aria-labelledby="brand-title">
            <h2 id="brand-title">Brand</h2>
            <dl>
              <dt>Name</dt>
              <dd>{data.brand.name}</dd>
              <dt>Brand id</dt>
              <dd>
                <code>{data.brand.brand_id}</code>
              </dd>
              <dt>Vertical</dt>
              <dd>{data.brand.vertical}</dd>
              <dt>Plan</dt>
              <dd>
                {data.brand.plan}
                {data.brand.live_keys_allowed ? "" : " (test keys only; live keys need Growth or above)"}
              </dd>
            </dl>
          </section>
          <section class="card" aria-labelledby="credits-title">
            <h2 id="credits-title">Credits</h2>
            <dl>
              <dt>Balance</dt>
              <dd>{formatCents(data.credits_cents)}</dd>
              <dt>Held for live streams</dt>
              <dd>{formatCents(data.credits_held_cents)}</dd>
              <dt>Available</dt>
              <dd>{formatCents(data.credits_available_cents)}</dd>
            </dl>
          </section>
          <section class="card" aria-labelledby="minutes-title">
            <h2 id="minutes-title">Minutes this period</h2>
            <Meter label="Minutes used" used={data.minutes_used} limit={data.plan_minutes} />
            <p>{formatNumber(data.minutes_left)} minutes left</p>
          </section>
          <section class="card" aria-labelledby="limits-title">
            <h2 id="limits-title">Limits</h2>
            <h3>Active {mode} streams</h3>
            <Meter label="Active streams" used={data.active_streams} limit={data.max_active_streams} />
            <h3>API requests this minute</h3>
            <Meter label="Requests this minute" used={data.requests_this_minute} limit={data.rate_limit_per_minute} />
          </section>
          {data.test_clock && (
            <section class="card" aria-labelledby="clock-title">
              <h2 id="clock-title">Test clock</h2>
              <dl>
                <dt>Test mode's time</dt>
                <dd>
                  <Time iso={data.test_clock.now} />
                </dd>
                <dt>Ahead of real time</dt>
                <dd>
                  {data.test_clock.offset_seconds === 0
                    ? "not advanced"
                    : formatDuration(data.test_clock.offset_seconds)}
                </dd>
              </dl>
              <p>
                Moved forward through the API (<code>POST /test-clock/advance</code>, or{" "}
                <code>live-stream-hosting clock advance 2h</code>); live mode runs on the real time.
              </p>
            </section>
          )}
        </div>
      )}
    </>
  );
}
