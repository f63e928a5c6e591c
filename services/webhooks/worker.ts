import { Backoff, Waker } from "@printshop/shared/events/waker";
import type { Stoppable } from "@printshop/shared/service-main";
import { claimDueDeliveries } from "./store/deliveries.ts";
import { DELIVERIES_CHANNEL, purgeOldEvents } from "./store/events.ts";
import { deliverOnce, type DispatchDeps, leaseMs } from "./dispatch.ts";

export interface WorkerOptions {
  /** Deliveries in flight at once in this process. */
  concurrency?: number;
  /** Safety net under LISTEN/NOTIFY, and how due retries are found. */
  pollIntervalMs?: number;
}

/**
 * Sends due deliveries, up to `concurrency` at a time, as slots free up. New deliveries wake it
 * through NOTIFY from whichever replica queued them; retries are found by polling.
 */
export async function startDeliveryWorker(
  deps: DispatchDeps,
  options: WorkerOptions = {},
): Promise<Stoppable> {
  const concurrency = options.concurrency ?? 32;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const waker = new Waker();
  const listener = await deps.sql.listen(DELIVERIES_CHANNEL, () => waker.wake());
  const inFlight = new Set<Promise<void>>();
  const backoff = new Backoff(250, 10_000);
  let running = true;
  let lastPurge = 0;

  const purgeHourly = async (): Promise<void> => {
    if (Date.now() - lastPurge < 3_600_000) return;
    lastPurge = Date.now();
    const removed = await purgeOldEvents(deps.sql);
    if (removed > 0) deps.logger.info("old events removed from the event log", { removed });
  };

  const loop = (async () => {
    while (running) {
      const free = concurrency - inFlight.size;
      let claimedAll = false;
      if (free > 0) {
        try {
          await purgeHourly();
          const claimed = await claimDueDeliveries(deps.sql, free, leaseMs(deps.timeoutMs));
          backoff.reset();
          claimedAll = claimed.length === free;
          for (const delivery of claimed) {
            const task: Promise<void> = deliverOnce(deps, delivery, "automatic")
              .catch((error) =>
                deps.logger.error("webhook delivery could not be recorded", {
                  deliveryId: delivery.id,
                  error: error instanceof Error ? error.message : String(error),
                })
              )
              .finally(() => {
                inFlight.delete(task);
                waker.wake();
              });
            inFlight.add(task);
          }
        } catch (error) {
          deps.logger.warn("webhook worker cannot claim deliveries", {
            error: error instanceof Error ? error.message : String(error),
          });
          await waker.sleep(backoff.next());
          continue;
        }
      }
      // More may be due right away when every free slot was filled; otherwise wait for a
      // notification, a finished delivery or the poll.
      if (!claimedAll || inFlight.size >= concurrency) await waker.sleep(pollIntervalMs);
    }
    await Promise.allSettled([...inFlight]);
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      waker.wake();
      await loop;
      await listener.unlisten().catch(() => {});
    },
  };
}
