import { Router } from "express";

export interface ProbeState {
  /** False until the first round of replica health checks has finished. */
  started: boolean;
  /** True once shutdown began: readiness fails so the Service stops sending new traffic. */
  draining: boolean;
}

/** Kubernetes probes: unauthenticated, cheap, never logged. */
export function probeRoutes(state: ProbeState): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", (_req, res) => {
    const ready = state.started && !state.draining;
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : state.draining ? "draining" : "starting" });
  });
  return router;
}
