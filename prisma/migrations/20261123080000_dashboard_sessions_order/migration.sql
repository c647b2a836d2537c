-- CreateIndex
CREATE INDEX "synced_charges_install_row_id_started_at_external_id_idx" ON "synced_charges"("install_row_id", "started_at" DESC, "external_id" DESC);
