import { deployService } from "@printshop/shared/service-main";
import { crmService } from "./app.ts";

// The Deno Deploy app (README "Deno Deploy"). The cron is registered at the top level, before any
// await: the platform finds crons by evaluating this module.
const app = deployService(crmService);
Deno.cron("crm background work", "* * * * *", () => app.tick());
