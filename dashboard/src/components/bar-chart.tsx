import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { dayFormat, formatNumber, hourFormat } from "../format.tsx";

/**
 * A bar chart (uPlot, drawn on a canvas) with a text alternative: the numbers are in the table
 * the page shows beside it, which `describedBy` names.
 */
export function BarChart(props: {
  title: string;
  starts: number[];
  values: number[];
  unit: "hour" | "day";
  color: string;
  describedBy: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const size = () => ({ width: Math.max(280, element.clientWidth), height: 220 });
    const plot = new uPlot(
      {
        ...size(),
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // The app's one locale on the axes too, as in its tables (format.tsx).
        axes: [
          {
            stroke: "#1f2933",
            grid: { show: false },
            values: (_u, splits) =>
              splits.map((start) => (props.unit === "hour" ? hourFormat : dayFormat).format(new Date(start * 1000))),
          },
          {
            stroke: "#1f2933",
            grid: { stroke: "#d9dee3" },
            values: (_u, splits) => splits.map((value) => formatNumber(value)),
          },
        ],
        series: [
          {},
          {
            label: props.title,
            stroke: props.color,
            fill: props.color,
            paths: uPlot.paths.bars!({ size: [0.7, 40] }),
            points: { show: false },
          },
        ],
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      },
      [props.starts, props.values],
      element,
    );
    const resize = () => plot.setSize(size());
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [props.starts, props.values, props.unit]);
  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label={`${props.title}, per ${props.unit} (UTC)`}
      aria-describedby={props.describedBy}
    />
  );
}
