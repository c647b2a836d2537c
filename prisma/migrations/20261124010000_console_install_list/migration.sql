-- CreateIndex
CREATE INDEX "installs_created_at_id_idx" ON "installs"("created_at", "id");

-- CreateIndex
CREATE INDEX "installs_status_changed_at_id_idx" ON "installs"("status_changed_at", "id");

-- CreateIndex
CREATE INDEX "installs_operator_id_idx" ON "installs"("operator_id");

-- CreateIndex
CREATE INDEX "installs_slug_idx" ON "installs"("slug");
