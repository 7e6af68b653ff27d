// Reading one member of a zip archive into memory (libzip).
//
// The benchmark archives we ship are read where they lie: nothing is
// extracted to disk. An archive may be password-protected (traditional
// PKWARE "ZipCrypto") because its authors ask that the questions never
// appear in plain text; reading the member straight into a string keeps it
// that way.
//
// Thread-safety: each call opens its own archive handle; concurrent calls are safe.
#ifndef EVALRUN_DATASETS_ZIP_READER_H_
#define EVALRUN_DATASETS_ZIP_READER_H_

#include <string>

#include "evals/base/status.h"

namespace evalrun {

// Reads the member named `member` (its full path inside the archive, matched
// exactly and case-sensitively, e.g. "dataset/questions.csv") of the zip
// file at `zip_path`, decrypting it with `password` when the member is
// encrypted (traditional PKWARE or WinZip AES, whatever libzip supports). An
// empty `password` means "none"; it is ignored for members that are not
// encrypted.
//
// On success stores the member's uncompressed bytes in *contents (replacing
// what was there); libzip has checked the CRC-32 of the whole member.
// On failure returns, with a message naming the zip and the member:
//   NotFound      the zip file does not exist, or has no such member;
//   InvalidInput  not a zip archive / inconsistent archive, the member is
//                 encrypted and no password or a wrong password was given,
//                 CRC or decompression error (corrupt data, or a wrong
//                 ZipCrypto password that passed the 1-in-256 header check);
//   IoError       the file could not be opened or read.
// *contents is left unspecified on failure.
//
// Opens the archive, reads and closes it on every call: no state is kept, so
// concurrent calls are safe (each has its own libzip handle).
Status ReadZipMember(const std::string& zip_path, const std::string& member,
                     const std::string& password, std::string* contents);

}  // namespace evalrun

#endif  // EVALRUN_DATASETS_ZIP_READER_H_
