// Minimal builders for Grafana dashboard JSON (schemaVersion 39): enough structure for real panels, nothing more.
import { DATASOURCE_UIDS } from "../constants";

export type DatasourceKind = "logstore" | "metrics";

export interface DatasourceRef {
  readonly type: "loki" | "prometheus";
  readonly uid: string;
}

export function datasourceRef(kind: DatasourceKind): DatasourceRef {
  return kind === "logstore" ? { type: "loki", uid: DATASOURCE_UIDS.logstore } : { type: "prometheus", uid: DATASOURCE_UIDS.metrics };
}

export interface Target {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat?: string;
  readonly datasource: DatasourceRef;
  /** The log store's query model. */
  readonly queryType?: "range" | "instant";
  /** The metrics server's query model: one instant evaluation (stat, table) or a range. */
  readonly instant?: boolean;
  readonly range?: boolean;
  /** Tables: one row per series, labels as columns. */
  readonly format?: "table";
}

export interface Panel {
  readonly id: number;
  readonly type: "timeseries" | "logs" | "stat" | "table" | "bargauge" | "row";
  readonly title: string;
  readonly description?: string;
  readonly datasource: DatasourceRef;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly targets: Target[];
  readonly fieldConfig: { defaults: Record<string, unknown>; overrides: unknown[] };
  readonly options: Record<string, unknown>;
  /** Rows: the variable the row is repeated for (one row per selected value), and the (empty) collapsed panel list. */
  readonly repeat?: string;
  readonly collapsed?: false;
  readonly panels?: [];
}

export interface Variable {
  readonly name: string;
  readonly label: string;
  readonly type: "query";
  readonly datasource: DatasourceRef;
  readonly query: string | Record<string, unknown>;
  readonly definition: string;
  readonly includeAll: true;
  readonly allValue: ".*";
  readonly multi: true;
  readonly refresh: 2;
  readonly current: { text: string; value: string };
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  /** What it is for: Grafana shows it in the dashboard list; docs/monitoring.md's reference uses it too. */
  readonly description: string;
  readonly tags: string[];
  readonly datasourceKind: DatasourceKind;
  readonly editable: false;
  readonly schemaVersion: 39;
  readonly time: { from: string; to: string };
  readonly refresh: string;
  readonly timezone: "browser";
  readonly templating: { list: Variable[] };
  readonly panels: Panel[];
}

export interface PanelSpec {
  readonly type: Panel["type"];
  readonly title: string;
  readonly description?: string;
  /** Rows only: repeat the row, and the panels below it up to the next row, once per value of this variable. */
  readonly repeat?: string;
  readonly exprs: readonly { expr: string; legend?: string }[];
  readonly unit?: string;
  /** Bar gauges: the value of a full bar, and where the bar turns orange, then red. */
  readonly max?: number;
  readonly thresholds?: readonly [orange: number, red: number];
  /** Width in grid columns (of 24); panels flow left to right, then wrap. */
  readonly w?: number;
  readonly h?: number;
}

/** Grafana's built-in time variables (e.g. `$__range`, the dashboard's time range), always defined. */
export const GRAFANA_TIME_VARIABLES = ["__range", "__interval", "__rate_interval"] as const;

/** An expression as the metrics server receives it: Grafana replaces its time variables with durations first. */
export function withGrafanaTimes(expr: string, duration = "5m"): string {
  return expr.replace(new RegExp(`\\$(${GRAFANA_TIME_VARIABLES.join("|")})\\b`, "g"), duration);
}

/** Instant for a single figure per series (stat, table, bar gauge), a range otherwise, in the datasource's own fields. */
function queryMode(ds: DatasourceRef, type: Panel["type"]): Pick<Target, "queryType" | "instant" | "range" | "format"> {
  const instant = type === "stat" || type === "table" || type === "bargauge";
  if (ds.type === "loki") return { queryType: instant ? "instant" : "range" };
  return { instant, range: !instant, ...(type === "table" ? { format: "table" as const } : {}) };
}

/** A panel's unit, scale and colour steps (Grafana's thresholds: green below the first step). */
function fieldDefaults(spec: PanelSpec): Record<string, unknown> {
  return {
    ...(spec.unit ? { unit: spec.unit } : {}),
    ...(spec.max !== undefined ? { min: 0, max: spec.max } : {}),
    ...(spec.thresholds
      ? {
          thresholds: {
            mode: "absolute",
            steps: [
              { color: "green", value: null },
              { color: "orange", value: spec.thresholds[0] },
              { color: "red", value: spec.thresholds[1] },
            ],
          },
        }
      : {}),
  };
}

/** Lays out panels on Grafana's 24-column grid and numbers them. */
export function buildPanels(kind: DatasourceKind, specs: readonly PanelSpec[]): Panel[] {
  const ds = datasourceRef(kind);
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  return specs.map((spec, i) => {
    if (spec.type === "row") {
      // A row spans the grid on a line of its own; the panels after it belong to it.
      y += rowHeight;
      const row: Panel = {
        id: i + 1,
        type: "row",
        title: spec.title,
        ...(spec.description ? { description: spec.description } : {}),
        datasource: ds,
        gridPos: { x: 0, y, w: 24, h: 1 },
        targets: [],
        fieldConfig: { defaults: {}, overrides: [] },
        options: {},
        ...(spec.repeat ? { repeat: spec.repeat } : {}),
        collapsed: false,
        panels: [],
      };
      x = 0;
      y += 1;
      rowHeight = 0;
      return row;
    }
    const w = spec.w ?? 12;
    const h = spec.h ?? (spec.type === "logs" ? 12 : 8);
    if (x + w > 24) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    const gridPos = { x, y, w, h };
    x += w;
    rowHeight = Math.max(rowHeight, h);
    const options: Record<string, unknown> =
      spec.type === "logs"
        ? { showTime: true, wrapLogMessage: true, sortOrder: "Descending", enableLogDetails: true }
        : spec.type === "stat"
          ? { reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false }, colorMode: "value" }
          : spec.type === "bargauge"
            ? { reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false }, orientation: "horizontal", displayMode: "basic", showUnfilled: true }
            : { legend: { displayMode: "list", placement: "bottom" }, tooltip: { mode: "multi" } };
    return {
      id: i + 1,
      type: spec.type,
      title: spec.title,
      ...(spec.description ? { description: spec.description } : {}),
      datasource: ds,
      gridPos,
      targets: spec.exprs.map((e, j) => ({
        refId: String.fromCharCode(65 + j),
        expr: e.expr,
        ...(e.legend ? { legendFormat: e.legend } : {}),
        datasource: ds,
        ...queryMode(ds, spec.type),
      })),
      fieldConfig: { defaults: fieldDefaults(spec), overrides: [] },
      options,
    };
  });
}

/** A multi-select template variable with "All" (= `.*`). Log variables use the Loki label-values query type. */
export function variable(kind: DatasourceKind, name: string, label: string, source: { label: string; selector: string }): Variable {
  const ds = datasourceRef(kind);
  const definition = `label_values(${source.selector}, ${source.label})`;
  return {
    name,
    label,
    type: "query",
    datasource: ds,
    query: kind === "logstore" ? { type: 1, label: source.label, stream: source.selector, refId: "LokiVariableQueryEditor-VariableQuery" } : { query: definition, refId: "PrometheusVariableQueryEditor-VariableQuery" },
    definition,
    includeAll: true,
    allValue: ".*",
    multi: true,
    refresh: 2,
    current: { text: "All", value: "$__all" },
  };
}

export function dashboard(args: {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  kind: DatasourceKind;
  variables?: Variable[];
  panels: readonly PanelSpec[];
}): Dashboard {
  return {
    uid: args.uid,
    title: args.title,
    description: args.description,
    tags: args.tags,
    datasourceKind: args.kind,
    editable: false,
    schemaVersion: 39,
    time: { from: "now-6h", to: "now" },
    refresh: "30s",
    timezone: "browser",
    templating: { list: args.variables ?? [] },
    panels: buildPanels(args.kind, args.panels),
  };
}
