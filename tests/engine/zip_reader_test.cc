#include "datasets/zip_reader.h"

#include <zip.h>

#include <filesystem>
#include <string>

#include "evals/base/sha256.h"
#include "gtest/gtest.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

// The GPQA archive and its facts (/work/shared/datasets/gpqa/PROVENANCE.md).
std::string GpqaZip() { return testing::DatasetsDir() + "/gpqa/dataset.zip"; }
constexpr char kGpqaPassword[] = "deserted-untie-orchid";

TEST(ZipReaderTest, ReadsEncryptedGpqaMembersInMemory) {
  std::string license;
  Status st = ReadZipMember(GpqaZip(), "dataset/license.txt", kGpqaPassword, &license);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(license.size(), 241u);
  EXPECT_EQ(Sha256Hex(license), "c4591c2eba3382b05a60e8437b7f67cc428539acbd7081d3ffe3fa55a98132db");

  std::string diamond;
  st = ReadZipMember(GpqaZip(), "dataset/gpqa_diamond.csv", kGpqaPassword, &diamond);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(diamond.size(), 1373492u);
  EXPECT_EQ(Sha256Hex(diamond), "41d1213cd7a4998605a26c2798500652572007161b3a92817ba46b35befcd305");

  // Replaces what *contents held.
  st = ReadZipMember(GpqaZip(), "dataset/license.txt", kGpqaPassword, &diamond);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(diamond.size(), 241u);
}

TEST(ZipReaderTest, WrongPasswordIsAClearError) {
  std::string contents;
  Status st = ReadZipMember(GpqaZip(), "dataset/license.txt", "not-the-password", &contents);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), GpqaZip() + ": member 'dataset/license.txt': Wrong password provided");
}

TEST(ZipReaderTest, MissingPasswordIsAClearError) {
  std::string contents;
  Status st = ReadZipMember(GpqaZip(), "dataset/license.txt", "", &contents);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), GpqaZip() +
                              ": member 'dataset/license.txt': No password provided"
                              " (the member is encrypted; a password is needed)");
}

TEST(ZipReaderTest, MissingMemberIsNamed) {
  std::string contents;
  Status st = ReadZipMember(GpqaZip(), "dataset/gpqa_platinum.csv", kGpqaPassword, &contents);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), GpqaZip() +
                              ": member 'dataset/gpqa_platinum.csv' not found (the archive has 7 "
                              "entries; names are full paths, case-sensitive)");
  // Names are matched exactly: no directory stripping, no case folding.
  EXPECT_EQ(ReadZipMember(GpqaZip(), "gpqa_diamond.csv", kGpqaPassword, &contents).code(),
            Status::Code::kNotFound);
  EXPECT_EQ(ReadZipMember(GpqaZip(), "dataset/GPQA_DIAMOND.csv", kGpqaPassword, &contents).code(),
            Status::Code::kNotFound);
}

// A temporary directory, deleted with everything in it at the end of the test.
class ZipReaderTempTest : public ::testing::Test {
 protected:
  // Writes a zip holding `name` -> `text`, stored uncompressed (so that the
  // bytes can be found and damaged), optionally ZipCrypto-encrypted.
  std::string WriteZip(const std::string& file, const std::string& name, const std::string& text,
                       const char* password) {
    std::string path = (dir_ / file).string();
    int error = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    EXPECT_NE(archive, nullptr) << error;
    if (archive == nullptr) return path;
    zip_source_t* source = zip_source_buffer(archive, text.data(), text.size(), 0);
    zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(index, 0);
    EXPECT_EQ(zip_set_file_compression(archive, index, ZIP_CM_STORE, 0), 0);
    if (password != nullptr) {
      EXPECT_EQ(zip_file_set_encryption(archive, index, ZIP_EM_TRAD_PKWARE, password), 0);
    }
    EXPECT_EQ(zip_close(archive), 0);
    return path;
  }

  testing::TempDir tmp_{"zip_reader_test"};
  std::filesystem::path dir_ = tmp_.path();
};

TEST_F(ZipReaderTempTest, PlainMemberReadsWithOrWithoutPassword) {
  const std::string text = "made-up line one\nmade-up line two\n";
  std::string path = WriteZip("plain.zip", "sub/notes.txt", text, nullptr);
  std::string contents;
  Status st = ReadZipMember(path, "sub/notes.txt", "", &contents);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(contents, text);
  st = ReadZipMember(path, "sub/notes.txt", "ignored-for-plain-members", &contents);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(contents, text);
}

TEST_F(ZipReaderTempTest, EmptyMember) {
  std::string path = WriteZip("empty.zip", "empty.txt", "", nullptr);
  std::string contents = "stale";
  Status st = ReadZipMember(path, "empty.txt", "", &contents);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(contents, "");
}

TEST_F(ZipReaderTempTest, ZipCryptoRoundTrip) {
  const std::string text = "a made-up secret, long enough to be encrypted for real: 0123456789";
  std::string path = WriteZip("secret.zip", "secret.txt", text, "hunter2");
  std::string contents;
  Status st = ReadZipMember(path, "secret.txt", "hunter2", &contents);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(contents, text);
  // The plain text must not be in the archive.
  EXPECT_EQ(testing::ReadFile(path).find("made-up secret"), std::string::npos);
}

TEST_F(ZipReaderTempTest, CrcErrorNamesZipAndMember) {
  const std::string text = "made-up payload whose bytes we will damage on disk";
  std::string path = WriteZip("damaged.zip", "payload.txt", text, nullptr);
  std::string bytes = testing::ReadFile(path);
  size_t at = bytes.find("payload whose");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'P';  // same length, different CRC-32
  testing::WriteFile(path, bytes);

  std::string contents;
  Status st = ReadZipMember(path, "payload.txt", "", &contents);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), path + ": member 'payload.txt': CRC error (corrupt data)");
}

TEST_F(ZipReaderTempTest, MissingFileIsNotFound) {
  std::string path = (dir_ / "no-such.zip").string();
  std::string contents;
  Status st = ReadZipMember(path, "x.txt", "", &contents);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), path + ": cannot open zip archive: No such file");
}

TEST_F(ZipReaderTempTest, NotAZipIsInvalidInput) {
  std::string path = (dir_ / "not-a.zip").string();
  testing::WriteFile(path, "this is a text file, not a zip archive, and it is long enough to matter\n");
  std::string contents;
  Status st = ReadZipMember(path, "x.txt", "", &contents);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), path + ": cannot open zip archive: Not a zip archive");
}

}  // namespace
}  // namespace evalrun
