export * from "./config";
export * from "./constants";
export { Logstore, type LogstoreArgs } from "./logstore";
export { Viewer, type ViewerArgs } from "./viewer";
export { Collector, type CollectorArgs } from "./collector";
export { Metrics, type MetricsArgs } from "./metrics";
export { Dashboards, type DashboardsArgs } from "./dashboards";
