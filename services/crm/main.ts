import { runService } from "@printshop/shared/service-main";
import { crmService } from "./app.ts";

await runService(crmService);
