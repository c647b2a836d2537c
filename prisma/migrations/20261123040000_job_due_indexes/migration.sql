-- CreateIndex
CREATE INDEX "installs_status_last_reconciled_at_idx" ON "installs"("status", "last_reconciled_at");

-- CreateIndex
CREATE INDEX "token_grants_refresh_token_expires_at_idx" ON "token_grants"("refresh_token_expires_at");
