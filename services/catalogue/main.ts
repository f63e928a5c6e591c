import { runService } from "@printshop/shared/service-main";
import { catalogueService } from "./app.ts";

await runService(catalogueService);
