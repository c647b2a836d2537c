-- CreateTable
CREATE TABLE "api_budgets" (
    "install_row_id" UUID NOT NULL,
    "quota" INTEGER NOT NULL,
    "window_seconds" INTEGER NOT NULL,
    "tat" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "api_budgets_pkey" PRIMARY KEY ("install_row_id")
);

-- AddForeignKey
ALTER TABLE "api_budgets" ADD CONSTRAINT "api_budgets_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
