import { runService } from "@printshop/shared/service-main";
import { ConfigSchema } from "./config.ts";
import { createApp } from "./app.ts";

await runService({
  service: "quotes",
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
});
