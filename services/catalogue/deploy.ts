import { deployService } from "@printshop/shared/service-main";
import { catalogueService } from "./app.ts";

// The Deno Deploy app (README "Deno Deploy"). The cron is registered at the top level, before any
// await: the platform finds crons by evaluating this module.
const app = deployService(catalogueService);
Deno.cron("catalogue background work", "* * * * *", () => app.tick());
