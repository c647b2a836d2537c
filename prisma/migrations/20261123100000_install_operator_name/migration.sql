-- AlterTable
ALTER TABLE "installs" ADD COLUMN     "operator_name" TEXT;
