import type { NextFunction, Request, RequestHandler, Response } from "express";

/** Handlers of one route, run in order as Express runs a route's stack. */
export type RouteChain = readonly RequestHandler[];

/**
 * The hot endpoints, found by one map lookup on method and exact path instead of Express's router walking and
 * matching every layer before them (a measurable share of a request's CPU: docs/benchmarks.md, "Where the
 * gateway's CPU goes"). Anything else — other methods, a trailing slash, other letter case — falls through to
 * the router, which serves the same routes, so what a client sees does not change.
 */
export function exactRoutes(routes: ReadonlyMap<string, RouteChain>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    const query = url.indexOf("?");
    const chain = routes.get(`${req.method} ${query < 0 ? url : url.slice(0, query)}`);
    if (chain) run(chain, 0, req, res, next);
    else next();
  };
}

/** Runs chain[i..]: as Express does, a thrown error or a rejected promise goes to `done` (the error handler). */
function run(chain: RouteChain, i: number, req: Request, res: Response, done: NextFunction): void {
  const step = (err?: unknown) => {
    if (err) done(err);
    else if (i + 1 < chain.length) run(chain, i + 1, req, res, done);
    else done();
  };
  try {
    const out = chain[i]!(req, res, step) as unknown;
    if (out instanceof Promise) out.catch(done);
  } catch (err) {
    done(err);
  }
}
