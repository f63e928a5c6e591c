import { deployService } from "@printshop/shared/service-main";
import { webhooksService } from "./app.ts";
import { webhooksBackground } from "./background.ts";

// The Deno Deploy app (README "Deno Deploy"). The cron is registered at the top level, before any
// await: the platform finds crons by evaluating this module.
const app = deployService({ ...webhooksService, background: webhooksBackground });
Deno.cron("webhooks background work", "* * * * *", () => app.tick());
