import { Router } from "express";

export interface ProbeState {
  /** False until the first round of replica health checks has finished. */
  started: boolean;
  /** True once shutdown began: readiness fails so the Service stops sending new traffic. */
  draining: boolean;
  /** How per-key limits are enforced now (rate-limiter.ts): shown by readiness, never failing it. */
  limits?: () => string;
}

export interface ProbeAnswer {
  status: number;
  body: { status: string; limits?: string };
}

/** Liveness: the process answers at all. */
export function liveness(): ProbeAnswer {
  return { status: 200, body: { status: "ok" } };
}

/**
 * Readiness: started (first health checks done) and not draining. The detail `limits` says how per-key limits
 * are enforced (`shared`, `per-replica`, or `unavailable` while Redis is down and the gateway fails closed); it
 * does not fail readiness: every replica would lose Redis together, and clients would get no answer at all
 * instead of a 503 envelope.
 */
export function readiness(state: ProbeState): ProbeAnswer {
  const ready = state.started && !state.draining;
  const body: ProbeAnswer["body"] = { status: ready ? "ready" : state.draining ? "draining" : "starting" };
  if (state.limits) body.limits = state.limits();
  return { status: ready ? 200 : 503, body };
}

/** The probe answer for `path`, if it is a probe path. */
export function probeAnswer(path: string, state: ProbeState): ProbeAnswer | undefined {
  if (path === "/healthz") return liveness();
  if (path === "/readyz") return readiness(state);
  return undefined;
}

/**
 * Kubernetes probes on the API listener: unauthenticated, cheap, never logged. The same answers are on the
 * metrics listener (see ops-listener.ts), which is where the pod's probes should point: client
 * connections cannot fill it.
 */
export function probeRoutes(state: ProbeState): Router {
  const router = Router();
  for (const path of ["/healthz", "/readyz"]) {
    router.get(path, (_req, res) => {
      const answer = probeAnswer(path, state)!;
      res.status(answer.status).json(answer.body);
    });
  }
  return router;
}
