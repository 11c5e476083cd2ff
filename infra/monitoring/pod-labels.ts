// The label that makes the collector ship a pod's logs (`<label_domain>/platform: ai-platform`, spec "Collector"),
// for the monitoring stack's own pods: the log store, viewer, collector and metrics server logs are then in the log
// store too. Without a label domain (no `platform:labelDomain`, collector not deployed) there is nothing to match.
import { PLATFORM_NAME, platformLabelKeys } from "../platform/labels";

export function monitoringPodLabels(labelDomain: string | undefined): Record<string, string> | undefined {
  return labelDomain ? { [platformLabelKeys(labelDomain).platform]: PLATFORM_NAME } : undefined;
}
