import { runService } from "@printshop/shared/service-main";
import { ConfigSchema } from "./config.ts";
import { createApp, dispatchDepsOf } from "./app.ts";
import { startEventConsumer } from "./consumer.ts";
import { startDeliveryWorker } from "./worker.ts";

await runService({
  service: "webhooks",
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
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
