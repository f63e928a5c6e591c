import type { Env, Hono } from "hono";
import type { Logger } from "./log.ts";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  PLATFORM_ORGANIZATION_ID,
  signInternalContextSync,
  verifyInternalContextSync,
} from "./internal_context.ts";
import { errorBody } from "./http/errors.ts";

/**
 * Work beside a process's requests (an outbox relay, an event consumer, a delivery or mail
 * worker), as a kick or a cron tick reaches it where no process lives for long (Deno Deploy).
 */
export interface Settleable {
  /** Does what is due now; resolves once it is done, or failing, or the loop has stopped. */
  settle(): Promise<void>;
}

/** Where an app is asked to drain its background work: a peer's kick, or a scheduler's tick. */
export const KICK_PATH = "/internal/kick";

/** Who a kick's signed context names: the platform itself, for this one purpose. */
const KICK_CREDENTIAL = "background-kick";

/**
 * The longest a kick or a tick waits for the work it started. Past it the request is answered
 * and the work goes on in the background: a wedged endpoint must not hold the kicker's request.
 */
export const SETTLE_CAP_MS = 25_000;

/**
 * Settles each stage in turn (the relay before the consumers, the consumers before the workers
 * that send what they queued), each within what is left of `capMs`. A stage that fails is
 * logged and the next still runs. Once `stopping` is aborted (the process was asked to stop) it
 * returns at once: a tick's request must not hold up the server's shutdown, which waits for it,
 * while the loops it waits for are stopped only after that shutdown.
 */
export async function settleInOrder(
  stages: readonly { name: string; work: Settleable }[],
  logger: Logger,
  capMs: number = SETTLE_CAP_MS,
  stopping?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + capMs;
  let onAbort = (): void => {};
  const stopped = new Promise<"stopped">((resolve) => {
    onAbort = () => resolve("stopped");
    if (stopping?.aborted) resolve("stopped");
  });
  // Taken off again at the end: every write's drain listens on the process's one signal.
  stopping?.addEventListener("abort", onAbort, { once: true });
  try {
    await settleStages(stages, logger, deadline, stopped, stopping);
  } finally {
    stopping?.removeEventListener("abort", onAbort);
  }
}

async function settleStages(
  stages: readonly { name: string; work: Settleable }[],
  logger: Logger,
  deadline: number,
  stopped: Promise<"stopped">,
  stopping: AbortSignal | undefined,
): Promise<void> {
  for (const stage of stages) {
    if (stopping?.aborted) return;
    const left = deadline - Date.now();
    if (left <= 0) {
      logger.warn("background work still running past the tick's cap", { stage: stage.name });
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cap = new Promise<"cap">((resolve) => timer = setTimeout(() => resolve("cap"), left));
    try {
      const outcome = await Promise.race([
        stage.work.settle().then(() => "done" as const),
        cap,
        stopped,
      ]);
      if (outcome === "stopped") return;
      if (outcome === "cap") {
        logger.warn("background work still running past the tick's cap", { stage: stage.name });
        return;
      }
    } catch (error) {
      logger.warn("background work failed on a tick", { stage: stage.name, error: String(error) });
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Adds `POST /internal/kick` to an app: with a context signed by INTERNAL_SECRET for that path,
 * it starts draining the app's background work and answers 202 at once, so that a peer's kicks
 * never queue behind a drain (the instance lives on for seconds after a request, and a stop
 * finishes what its loops hold). `?wait=true` answers 204 once the drain is done (or past the
 * cap), as a cron tick waits. Any other caller gets 401: a kick costs the database work, so
 * strangers may not send one.
 */
export function addKickRoute<E extends Env>(
  app: Hono<E>,
  contextKey: ContextKey,
  drain: () => Promise<void>,
): Hono<E> {
  app.post(KICK_PATH, async (c) => {
    const verified = verifyInternalContextSync(
      contextKey,
      "POST",
      KICK_PATH,
      c.req.header(INTERNAL_CONTEXT_HEADER),
    );
    if (
      !verified.ok || verified.context.organizationId !== PLATFORM_ORGANIZATION_ID ||
      verified.context.credentialId !== KICK_CREDENTIAL
    ) {
      return c.json(
        errorBody("unauthenticated", "A kick must carry the platform's signed context"),
        401,
      );
    }
    if (c.req.query("wait") === "true") {
      await drain();
      return c.body(null, 204);
    }
    void drain();
    return c.body(null, 202);
  });
  return app;
}

/** The header a kick carries: signed for KICK_PATH, valid for a minute. */
export function kickHeader(contextKey: ContextKey, requestId: string): string {
  return signInternalContextSync(contextKey, "POST", KICK_PATH, {
    organizationId: PLATFORM_ORGANIZATION_ID,
    credentialKind: "tenant_key",
    credentialId: KICK_CREDENTIAL,
    scopes: [],
    requestId,
    issuedAt: Date.now(),
  });
}

/**
 * Kicks the apps at `urls` after this one relayed events they consume. At most one kick per app
 * is in flight; kicks asked for meanwhile make one more after it, so a stream of batches costs a
 * kick per round trip, not one per batch. A kick that fails is only logged: the consumer's next
 * tick (a minute at most on Deno Deploy) reads the events anyway. `stop()` lets go of the kicks
 * in flight without waiting for their answers: the kicked app goes on draining regardless, and a
 * stopping instance has 5 s in all.
 */
export function kicker(
  urls: readonly string[],
  contextKey: ContextKey,
  logger: Logger,
  timeoutMs: number = SETTLE_CAP_MS + 5_000,
): { kick(): void; stop(): void } {
  const stopping = new AbortController();
  const state = new Map<string, { running: Promise<void> | null; again: boolean }>(
    urls.map((url) => [url, { running: null, again: false }]),
  );
  const send = async (url: string): Promise<void> => {
    const requestId = crypto.randomUUID();
    try {
      const res = await fetch(`${url}${KICK_PATH}`, {
        method: "POST",
        headers: {
          [INTERNAL_CONTEXT_HEADER]: kickHeader(contextKey, requestId),
          "x-request-id": requestId,
        },
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal]),
      });
      await res.body?.cancel();
      if (res.status !== 202) {
        logger.warn("kick refused", { target: url, status: res.status, requestId });
      }
    } catch (error) {
      logger.debug("kick not delivered; the target's tick will catch up", {
        target: url,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };
  const run = (url: string): void => {
    if (stopping.signal.aborted) return;
    const entry = state.get(url)!;
    if (entry.running) {
      entry.again = true;
      return;
    }
    entry.running = send(url).finally(() => {
      entry.running = null;
      if (entry.again) {
        entry.again = false;
        run(url);
      }
    });
  };
  return {
    kick: () => urls.forEach(run),
    stop: () => stopping.abort(),
  };
}
