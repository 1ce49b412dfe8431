// A show_rich_output_kandev presentation (version 1, checked by the server: kandev/domain/sessions/rich_output.py):
// a title, a description and up to four blocks — metrics, charts and files. The agent chooses content, never
// markup: every string is rendered as text. Charts are drawn by uPlot in a chunk of their own (ChartPlot), so
// neither the board nor a transcript without charts pays for it; each chart also carries its data as a table.
// File contents are fetched only when the reader asks (Preview), and only PNG, JPEG, GIF and WebP are drawn.
import { lazy, Suspense, useState } from "react";
import { errorText, gql, jsonObject, unwrap } from "../api/graphql";
import { FILE_PREVIEW } from "../api/ops";
import type { FilePreviewQuery } from "../gql/graphql";

const LazyChartPlot = lazy(() => import("./ChartPlot"));
// The same chunk the transcript's agent text uses: GitHub Markdown, raw HTML dropped, only safe links.
const LazyMarkdown = lazy(() => import("./Markdown"));

export interface ChartSeries {
  label: string;
  values: (number | null)[];
}

export interface ChartBlock {
  type: "chart";
  chart_type: "line" | "bar";
  title: string;
  summary: string;
  labels: string[];
  series: ChartSeries[];
}

interface MetricItem {
  label: string;
  value: string;
  detail?: string;
}

interface FileBlock {
  type: "file";
  path: string;
  repo?: string;
  title?: string;
  caption?: string;
}

type Block = ChartBlock | { type: "metrics"; items: MetricItem[] } | FileBlock;

interface Presentation {
  title: string;
  description?: string;
  blocks: Block[];
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value ? value : undefined);

// The stored data is the server's own output, but a client trusts no shape it did not check: anything
// unexpected is left out rather than rendered half-way.
function chartBlock(raw: Record<string, unknown>): ChartBlock | null {
  const labels = Array.isArray(raw.labels) ? raw.labels.map(String) : [];
  const series = (Array.isArray(raw.series) ? raw.series : []).map(jsonObject).map((s) => ({
    label: text(s.label) ?? "",
    values: (Array.isArray(s.values) ? s.values : []).map((v) => (typeof v === "number" && Number.isFinite(v) ? v : null)),
  }));
  const kind = raw.chart_type === "bar" ? "bar" : raw.chart_type === "line" ? "line" : null;
  const title = text(raw.title);
  if (!kind || !title || labels.length === 0 || series.length === 0) return null;
  if (series.some((s) => s.values.length !== labels.length)) return null;
  return { type: "chart", chart_type: kind, title, summary: text(raw.summary) ?? "", labels, series };
}

function block(value: unknown): Block | null {
  const raw = jsonObject(value);
  if (raw.type === "chart") return chartBlock(raw);
  if (raw.type === "metrics") {
    const items = (Array.isArray(raw.items) ? raw.items : []).map(jsonObject).flatMap((i) => {
      const label = text(i.label);
      const shown = text(i.value);
      return label && shown ? [{ label, value: shown, detail: text(i.detail) }] : [];
    });
    return items.length ? { type: "metrics", items } : null;
  }
  if (raw.type === "file") {
    const path = text(raw.path);
    return path ? { type: "file", path, repo: text(raw.repo), title: text(raw.title), caption: text(raw.caption) } : null;
  }
  return null;
}

/** The presentation in a RICH_OUTPUT message's data, or null when it has none this client understands. */
export function presentationOf(data: unknown): Presentation | null {
  const raw = jsonObject(jsonObject(data).rich_output);
  const title = text(raw.title);
  if (raw.version !== 1 || !title || !Array.isArray(raw.blocks)) return null;
  const blocks = raw.blocks.map(block).filter((b): b is Block => b !== null);
  return { title, description: text(raw.description), blocks };
}

function Metrics({ items }: { items: MetricItem[] }) {
  return (
    <dl className="rich-metrics" data-testid="rich-metrics">
      {items.map((item, index) => (
        <div className="rich-metric" key={index}>
          <dt>{item.label}</dt>
          <dd className="rich-metric-value">{item.value}</dd>
          {item.detail && <dd className="rich-metric-detail">{item.detail}</dd>}
        </div>
      ))}
    </dl>
  );
}

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 });

/** The chart's numbers as a table: what a screen reader (or anyone wanting exact values) reads. */
function ChartTable({ chart }: { chart: ChartBlock }) {
  return (
    <div className="rich-table">
      <table data-testid="rich-chart-table">
        <caption>{chart.title}</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            {chart.series.map((s, i) => (
              <th scope="col" key={i}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {chart.labels.map((label, row) => (
            <tr key={row}>
              <th scope="row">{label}</th>
              {chart.series.map((s, i) => (
                <td key={i}>{s.values[row] === null ? "—" : NUMBER.format(s.values[row] as number)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A chart with its title, summary and its numbers as a table (the transcript's and the Stats page's). */
export function Chart({ chart, chartKey }: { chart: ChartBlock; chartKey: string | null }) {
  return (
    <figure className="rich-chart" data-testid="rich-chart">
      <figcaption className="rich-block-title">{chart.title}</figcaption>
      <Suspense fallback={<p className="muted small">Drawing the chart…</p>}>
        <LazyChartPlot chart={chart} chartKey={chartKey} />
      </Suspense>
      {chart.summary && <p className="rich-summary">{chart.summary}</p>}
      <details className="rich-data">
        <summary>Data table</summary>
        <ChartTable chart={chart} />
      </details>
    </figure>
  );
}

type Preview = FilePreviewQuery["filePreview"];
// The formats the server tells by their bytes; anything else (SVG, HTML: markup) is never drawn inline.
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const REASONS: Record<string, string> = {
  MISSING: "the file does not exist (or the task's files are not there yet)",
  NOT_A_FILE: "the path names a folder or a special file",
  TOO_LARGE: "the file is larger than 1 MiB",
  BINARY: "the file is neither text nor a PNG, JPEG, GIF or WebP image",
};

function PreviewBody({ preview, name }: { preview: Preview; name: string }) {
  if (preview.__typename === "TextFilePreview") {
    return (
      <pre className="rich-file-text" tabIndex={0} aria-label={`Content of ${name}`} data-testid="rich-file-text">
        {preview.text}
      </pre>
    );
  }
  if (preview.__typename === "ImageFilePreview" && IMAGE_TYPES.includes(preview.mimeType)) {
    return (
      <img
        className="rich-file-image"
        src={`data:${preview.mimeType};base64,${preview.dataBase64}`}
        alt={name}
        data-testid="rich-file-image"
      />
    );
  }
  const reason = preview.__typename === "FilePreviewUnavailable" ? REASONS[preview.reason] : undefined;
  return (
    <p className="rich-file-unavailable" data-testid="rich-file-unavailable">
      Preview unavailable: {reason ?? "this kind of file is not shown"}.
    </p>
  );
}

function File({ file, taskId }: { file: FileBlock; taskId: string | null }) {
  const [state, setState] = useState<{ loading: boolean; preview?: Preview; error?: string }>({ loading: false });
  const name = file.title ?? file.path;
  const load = async () => {
    if (!taskId) return;
    setState({ loading: true });
    try {
      const data = await gql(FILE_PREVIEW, { taskId, path: file.path, repository: file.repo ?? null });
      setState({ loading: false, preview: unwrap(data.filePreview) });
    } catch (error) {
      setState({ loading: false, error: errorText(error) });
    }
  };
  return (
    <div className="rich-file" data-testid="rich-file">
      <div className="rich-file-head">
        <div className="rich-file-name">
          {file.title && <div className="rich-block-title">{file.title}</div>}
          <code className="rich-file-path">
            {file.repo ? `${file.repo}: ` : ""}
            {file.path}
          </code>
        </div>
        {taskId && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void load()}
            disabled={state.loading}
            aria-busy={state.loading}
            data-testid="rich-file-preview"
          >
            {/* The visible word starts the accessible name; the file's name tells the buttons apart. */}
            {state.preview ? "Reload" : "Preview"}
            <span className="sr-only"> {name}</span>
          </button>
        )}
      </div>
      {file.caption && <p className="rich-summary">{file.caption}</p>}
      <div aria-live="polite">
        {state.error && (
          <p className="rich-file-unavailable" role="alert">
            Preview failed: {state.error}
          </p>
        )}
        {state.preview && <PreviewBody preview={state.preview} name={name} />}
      </div>
    </div>
  );
}

interface RichOutputProps {
  presentation: Presentation;
  taskId: string | null;
  /** The message the presentation is in: with a block's place in it, names a chart whose hidden series are kept. */
  messageId?: string | null;
}

export function RichOutput({ presentation, taskId, messageId = null }: RichOutputProps) {
  return (
    <section className="rich" aria-label={presentation.title}>
      <div className="rich-title">{presentation.title}</div>
      {presentation.description && (
        <div className="rich-description">
          <Suspense fallback={<p>{presentation.description}</p>}>
            <LazyMarkdown text={presentation.description} />
          </Suspense>
        </div>
      )}
      {presentation.blocks.map((b, index) =>
        b.type === "chart" ? (
          <Chart chart={b} chartKey={messageId && `${messageId}/${index}`} key={index} />
        ) : b.type === "metrics" ? (
          <Metrics items={b.items} key={index} />
        ) : (
          <File file={b} taskId={taskId} key={index} />
        ),
      )}
    </section>
  );
}
