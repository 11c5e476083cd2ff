import { createServer, type Server } from "node:http";
import type { GatewayMetrics } from "../observability/metrics";
import { probeAnswer, type ProbeState } from "./probes";

/**
 * The operations listener (GATEWAY_METRICS_PORT): Prometheus metrics and the Kubernetes probes. It is not the
 * API listener on purpose: clients can hold every connection the API listener admits (its caps refuse new
 * connections when all are busy), and a liveness probe refused there would get a healthy pod restarted.
 */
export function createOpsServer(metrics: GatewayMetrics, state: ProbeState): Server {
  return createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "";
    if (req.method !== "GET") {
      res.writeHead(405, { "content-type": "text/plain", allow: "GET" }).end("GET only\n");
      return;
    }
    if (path === "/metrics") {
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
      return;
    }
    const probe = probeAnswer(path, state);
    if (probe) res.writeHead(probe.status, { "content-type": "application/json" }).end(JSON.stringify(probe.body));
    else res.writeHead(404, { "content-type": "text/plain" }).end("metrics are at /metrics; probes at /healthz and /readyz\n");
  });
}
