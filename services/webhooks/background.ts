import type { Background, BackgroundDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { ON_DEMAND_LOOP } from "@printshop/shared/events/waker";
import { dispatchDepsOf } from "./app.ts";
import { startEventConsumer } from "./consumer.ts";
import { startDeliveryWorker } from "./worker.ts";

/**
 * Records every topic's events with the deliveries they call for, and sends those deliveries.
 * Settled in that order, so that a tick sends what the events it read queued.
 */
export async function webhooksBackground(deps: BackgroundDeps<Config>): Promise<Background> {
  const worker = await startDeliveryWorker(
    await dispatchDepsOf(deps)(),
    deps.listen ? {} : ON_DEMAND_LOOP,
  );
  const consumer = await startEventConsumer(deps);
  return {
    async stop() {
      await consumer.stop();
      await worker.stop();
    },
    async settle() {
      await consumer.settle?.();
      await worker.settle();
    },
  };
}
