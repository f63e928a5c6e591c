import { runService } from "@printshop/shared/service-main";
import { dispatchDepsOf, webhooksService } from "./app.ts";
import { startEventConsumer } from "./consumer.ts";
import { startDeliveryWorker } from "./worker.ts";

await runService({
  ...webhooksService,
  background: async (deps) => {
    const worker = await startDeliveryWorker(await dispatchDepsOf(deps)());
    const consumer = await startEventConsumer(deps);
    return {
      async stop() {
        await consumer.stop();
        await worker.stop();
      },
    };
  },
});
