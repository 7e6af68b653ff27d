#include "datasets/zip_reader.h"

#include <zip.h>

#include <algorithm>
#include <memory>
#include <string>

namespace evalrun {
namespace {

std::string LibzipMessage(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }  // read-only: nothing to write
};
struct FileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

// Maps a libzip error met while opening or reading `member` to a Status.
Status MemberError(const std::string& where, int code, bool had_password) {
  std::string text = where + ": " + LibzipMessage(code);
  switch (code) {
    case ZIP_ER_NOPASSWD:
      return Status::InvalidInput(text + " (the member is encrypted; a password is needed)");
    case ZIP_ER_WRONGPASSWD:
      return Status::InvalidInput(text);
    case ZIP_ER_CRC:
    case ZIP_ER_ZLIB:
    case ZIP_ER_COMPRESSED_DATA:
    case ZIP_ER_INCONS:
      return Status::InvalidInput(
          text + (had_password ? " (corrupt data or wrong password)" : " (corrupt data)"));
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_COMPNOTSUPP:
      return Status::InvalidInput(text);
    default:
      return Status::IoError(text);
  }
}

}  // namespace

Status ReadZipMember(const std::string& zip_path, const std::string& member,
                     const std::string& password, std::string* contents) {
  int open_error = 0;
  std::unique_ptr<zip_t, ArchiveCloser> archive(
      zip_open(zip_path.c_str(), ZIP_RDONLY, &open_error));
  if (archive == nullptr) {
    std::string text = zip_path + ": cannot open zip archive: " + LibzipMessage(open_error);
    switch (open_error) {
      case ZIP_ER_NOENT:
        return Status::NotFound(text);
      case ZIP_ER_NOZIP:
      case ZIP_ER_INCONS:
        return Status::InvalidInput(text);
      default:
        return Status::IoError(text);
    }
  }

  const std::string where = zip_path + ": member '" + member + "'";
  zip_int64_t index = zip_name_locate(archive.get(), member.c_str(), 0);
  if (index < 0) {
    return Status::NotFound(where + " not found (the archive has " +
                            std::to_string(zip_get_num_entries(archive.get(), 0)) +
                            " entries; names are full paths, case-sensitive)");
  }

  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive.get(), index, 0, &stat) != 0) {
    return MemberError(where, zip_error_code_zip(zip_get_error(archive.get())), !password.empty());
  }

  const char* pw = password.empty() ? nullptr : password.c_str();
  std::unique_ptr<zip_file_t, FileCloser> file(
      zip_fopen_index_encrypted(archive.get(), index, 0, pw));
  if (file == nullptr) {
    return MemberError(where, zip_error_code_zip(zip_get_error(archive.get())), pw != nullptr);
  }

  // Read straight into *contents, in one call when the directory gives the
  // size (trusted only up to 64 MiB, so that a damaged entry cannot make us
  // allocate gigabytes up front), then until libzip reports the end: the CRC
  // check happens there.
  contents->clear();
  constexpr size_t kMaxFirstChunk = size_t{1} << 26;
  size_t chunk = (stat.valid & ZIP_STAT_SIZE) && stat.size > 0
                     ? static_cast<size_t>(std::min<zip_uint64_t>(stat.size, kMaxFirstChunk))
                     : (size_t{1} << 16);
  while (true) {
    size_t old_size = contents->size();
    contents->resize(old_size + chunk);
    zip_int64_t n = zip_fread(file.get(), contents->data() + old_size, chunk);
    if (n < 0) {
      return MemberError(where, zip_error_code_zip(zip_file_get_error(file.get())), pw != nullptr);
    }
    contents->resize(old_size + static_cast<size_t>(n));
    if (n == 0) break;
    chunk = size_t{1} << 16;
  }
  if ((stat.valid & ZIP_STAT_SIZE) && contents->size() != stat.size) {
    return Status::InvalidInput(where + ": read " + std::to_string(contents->size()) +
                                " bytes, the directory says " + std::to_string(stat.size) +
                                " (corrupt archive)");
  }
  return Status::Ok();
}

}  // namespace evalrun
