// A rich-output chart drawn by uPlot on a canvas: a chunk of its own, loaded only when a transcript has a chart.
// x is the label's index (labels are categories, not numbers or times); the axes name the labels, the legend
// shows the hovered values and hides or shows a series on click. The canvas is an image to assistive
// technology, named by the chart's title and summary; its numbers are in the data table beside it. The series a
// reader hid stay hidden when the chart is drawn again (a reload, a later visit): remembered in localStorage.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ChartBlock } from "./RichOutput";

// Distinct in hue and lightness, readable on the light and the dark theme.
const COLORS = ["#2f6fdf", "#e0701f", "#2a9d5c", "#b0409e"];
const HEIGHT = 240;
const MIN_LABEL_SPACE = 64; // CSS pixels per x label before labels are thinned out

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });

// { chart key: names of its hidden series }, the chart changed last at the end; only the latest MAX_REMEMBERED
// charts are kept, so the entry never outgrows its use. A chart with every series shown has no entry.
const HIDDEN_KEY = "kandev.chartHiddenSeries";
const MAX_REMEMBERED = 300;

function remembered(): Record<string, unknown> {
  try {
    const all: unknown = JSON.parse(localStorage.getItem(HIDDEN_KEY) ?? "{}");
    return all && typeof all === "object" && !Array.isArray(all) ? (all as Record<string, unknown>) : {};
  } catch {
    return {}; // storage unavailable or garbage in it: every series shown
  }
}

function hiddenSeries(chartKey: string): Set<string> {
  const names = remembered()[chartKey];
  return new Set(Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : []);
}

function rememberHidden(chartKey: string, names: string[]): void {
  const all = remembered();
  delete all[chartKey]; // re-added at the end: the most recent
  if (names.length) all[chartKey] = names;
  const keys = Object.keys(all); // chart keys are never integer-like, so this is insertion order
  keys.slice(0, Math.max(0, keys.length - MAX_REMEMBERED)).forEach((key) => delete all[key]);
  try {
    localStorage.setItem(HIDDEN_KEY, JSON.stringify(all));
  } catch {
    // storage unavailable or full: the choice lasts as long as the chart on the page
  }
}

/** Bars side by side in each label's slot: series `index` of `count`, 80% of the slot for the group. */
function groupedBars(index: number, count: number): uPlot.Series.PathBuilder {
  return (u, seriesIdx, idx0, idx1) => {
    const path = new Path2D();
    const xs = u.data[0];
    const ys = u.data[seriesIdx];
    const slot = Math.abs(u.valToPos(1, "x", true) - u.valToPos(0, "x", true));
    const width = (slot * 0.8) / count;
    const top = u.bbox.top;
    const bottom = u.bbox.top + u.bbox.height;
    const base = Math.min(bottom, Math.max(top, u.valToPos(0, "y", true)));
    for (let i = idx0; i <= idx1; i++) {
      const value = ys[i];
      if (value === null || value === undefined) continue;
      const left = u.valToPos(xs[i], "x", true) - slot * 0.4 + index * width;
      const end = u.valToPos(value, "y", true);
      path.rect(left, Math.min(end, base), width, Math.max(1, Math.abs(base - end)));
    }
    return { stroke: path, fill: path };
  };
}

function options(chart: ChartBlock, chartKey: string | null, width: number, text: string, grid: string): uPlot.Options {
  const n = chart.labels.length;
  const bars = chart.chart_type === "bar";
  const only = chart.series.length === 1 ? chart.series[0].label : undefined;
  // By name, not position: a series no longer in the chart is simply not found.
  const hidden = chartKey ? hiddenSeries(chartKey) : new Set<string>();
  const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return {
    width,
    height: HEIGHT,
    scales: {
      // Categories: a half slot of room either side, so the first and last bars (or points) are whole.
      x: { time: false, range: () => (bars || n === 1 ? [-0.5, n - 0.5] : [0, n - 1]) },
      // Bars grow from zero, so zero is always on the axis.
      y: bars ? { range: (_u, min, max) => uPlot.rangeNum(Math.min(0, min), Math.max(0, max), 0.1, true) } : {},
    },
    axes: [
      {
        ...axis,
        splits: (u) => {
          const room = Math.max(1, Math.floor(u.bbox.width / devicePixelRatio / MIN_LABEL_SPACE));
          const step = Math.max(1, Math.ceil(n / room));
          return chart.labels.map((_, i) => i).filter((i) => i % step === 0);
        },
        values: (_u, splits) => splits.map((v) => chart.labels[v] ?? ""),
      },
      { ...axis, label: only, values: (_u, splits) => splits.map((v) => NUMBER.format(v)), size: 56 },
    ],
    series: [
      { label: "Label", value: (_u, v) => (v === null ? "—" : chart.labels[v] ?? "—") },
      ...chart.series.map((s, i) => {
        const color = COLORS[i % COLORS.length];
        return {
          label: s.label,
          show: !hidden.has(s.label),
          stroke: color,
          width: bars ? 1 : 2,
          fill: bars ? color : undefined,
          paths: bars ? groupedBars(i, chart.series.length) : undefined,
          points: { show: !bars, size: 6 },
          value: (_u: uPlot, v: number | null) => (v === null ? "—" : NUMBER.format(v)),
        };
      }),
    ],
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    hooks: {
      setSeries: [
        (u, _index, opts) => {
          if (!chartKey || opts.show === undefined) return; // a hover focusing a series changes nothing kept
          rememberHidden(chartKey, u.series.slice(1).flatMap((s) => (s.show ? [] : [String(s.label)])));
        },
      ],
    },
  };
}

/** `chartKey` names the chart across reloads (its message and place in it); null: hidden series are not kept. */
export default function ChartPlot({ chart, chartKey }: { chart: ChartBlock; chartKey: string | null }) {
  const box = useRef<HTMLDivElement>(null);
  // The transcript re-renders on every new message with a freshly parsed presentation: the plot is redrawn
  // only when the chart itself changes, so a hidden series stays hidden and nothing flickers.
  const same = JSON.stringify(chart);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const style = getComputedStyle(el);
    const data: uPlot.AlignedData = [chart.labels.map((_, i) => i), ...chart.series.map((s) => s.values)];
    const width = () => Math.max(200, Math.floor(el.clientWidth));
    const plot = new uPlot(options(chart, chartKey, width(), style.color, "rgba(128,128,128,0.25)"), data, el);
    const canvas = plot.root.querySelector(".u-wrap");
    canvas?.setAttribute("role", "img");
    canvas?.setAttribute("aria-label", `${chart.chart_type === "bar" ? "Bar" : "Line"} chart: ${chart.title}. ${chart.summary}`);
    // Legend entries hide and show their series on click (uPlot listens on the entry's name cell); make them
    // reachable by keyboard too.
    plot.root.querySelectorAll<HTMLElement>(".u-legend .u-series > th").forEach((name, index) => {
      if (index === 0) return; // the x entry
      name.tabIndex = 0;
      name.title = "Show or hide this series";
      name.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        name.click();
      });
    });
    const resize = new ResizeObserver(() => {
      if (width() !== plot.width) plot.setSize({ width: width(), height: HEIGHT });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
    // `same` stands for `chart`: the chart of the render its content last changed in.
  }, [same, chartKey]);
  return <div className="rich-plot" ref={box} data-testid="rich-plot" />;
}
