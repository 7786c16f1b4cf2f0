import { useMemo, useState } from "preact/hooks";
import { pathsModesModeAnalyticsGetParametersQueryPeriodValues as PERIODS } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { BarChart } from "../components/bar-chart.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { SelectField } from "../components/select-field.tsx";
import { bucketAnalytics, type Series, sum } from "../analytics-series.ts";
import { countOf, dayFormat, formatNumber, hourFormat } from "../format.tsx";
import { useLoad } from "../hooks.ts";

type Period = Schemas["Analytics"]["period"];
const PERIOD_NAMES: Record<Period, string> = { "24h": "Last 24 hours", "7d": "Last 7 days", "30d": "Last 30 days" };

/** The API's analytics (the same numbers as GET /api/v1/analytics) as charts per day or hour. */
export function AnalyticsPage({ mode }: { mode: Mode }) {
  const [period, setPeriod] = useState<Period>("7d");
  const analytics = useLoad(
    () => api.GET("/modes/{mode}/analytics", { params: { path: { mode }, query: { period } } }),
    [mode, period],
  );
  const data = analytics.data;
  const series = useMemo(() => data && bucketAnalytics(data, new Date()), [data]);
  return (
    <>
      <h1>Analytics ({mode})</h1>
      <div class="toolbar">
        <SelectField
          label="Period"
          value={period}
          values={PERIODS}
          optionLabel={(value) => PERIOD_NAMES[value]}
          onChange={setPeriod}
        />
      </div>
      <ErrorNote message={analytics.error} />
      {!data && !analytics.error && <Loading what="analytics" />}
      {data && series && (
        <>
          <dl class="totals" data-testid="analytics-totals">
            <div>
              <dt>Streams</dt>
              <dd data-total="streams">{formatNumber(sum(series.streams))}</dd>
            </div>
            <div>
              <dt>Streamed minutes</dt>
              <dd data-total="minutes">{formatNumber(sum(series.minutes))}</dd>
            </div>
            <div>
              <dt>Viewers</dt>
              <dd data-total="viewers">{formatNumber(sum(series.viewers))}</dd>
            </div>
            <div>
              <dt>Live now</dt>
              <dd>{formatNumber(data.live_now)}</dd>
            </div>
            <div>
              <dt>Average viewers per stream</dt>
              <dd>{data.avg_viewers_per_stream}</dd>
            </div>
          </dl>
          {sum(series.streams) !== data.total_streams && (
            <ErrorNote
              message={`The charts count ${sum(series.streams)} streams but the server counts ${data.total_streams}: reload the page.`}
            />
          )}
          <div class="charts">
            <Chart title="Streamed minutes" values={series.minutes} series={series} color="#1d5fa8" id="minutes" />
            <Chart title="Streams" values={series.streams} series={series} color="#6a3fb5" id="streams" />
            <Chart title="Viewers" values={series.viewers} series={series} color="#0b7a55" id="viewers" />
          </div>
          <h2>By platform</h2>
          <ul>
            {Object.entries(data.by_platform).map(([platform, streams]) => (
              <li key={platform}>
                {platform}: {countOf(streams, "stream")}
              </li>
            ))}
            {Object.keys(data.by_platform).length === 0 && <li>No streams in this period.</li>}
          </ul>
        </>
      )}
    </>
  );
}

function Chart({
  title,
  values,
  series,
  color,
  id,
}: {
  title: string;
  values: number[];
  series: Series;
  color: string;
  id: string;
}) {
  const label = (start: number) => (series.unit === "hour" ? hourFormat : dayFormat).format(new Date(start * 1000));
  return (
    <section class="card chart-card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        {title} per {series.unit}
      </h2>
      <BarChart
        title={title}
        starts={series.starts}
        values={values}
        unit={series.unit}
        color={color}
        describedBy={`${id}-table`}
      />
      <details>
        <summary>Numbers</summary>
        <table id={`${id}-table`}>
          <thead>
            <tr>
              <th scope="col">{series.unit === "hour" ? "Hour (UTC)" : "Day (UTC)"}</th>
              <th scope="col">{title}</th>
            </tr>
          </thead>
          <tbody>
            {series.starts.map((start, index) => (
              <tr key={start}>
                <td>{label(start)}</td>
                <td>{formatNumber(values[index]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
