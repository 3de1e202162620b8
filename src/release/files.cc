// Durable owner-only writes and the store lock (files.h).
#include "release/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/npy.h"

namespace switchyard::release {
namespace fs = std::filesystem;

namespace {
std::string Errno() { return std::strerror(errno); }
}  // namespace

Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::Ok();
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty() && parent != fs::path(dir)) SY_RETURN_IF_ERROR(MakeDirs(parent.string()));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IoError("cannot create folder '" + dir + "': " + Errno());
  }
  // mkdir honours the umask; 0700 is already the most a umask can leave, but a umask that
  // removes owner bits would make the store unusable, so set the mode explicitly.
  ::chmod(dir.c_str(), 0700);
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open folder '" + dir + "': " + Errno());
  const int rc = ::fsync(fd);
  const std::string why = Errno();
  ::close(fd);
  if (rc != 0) return Status::IoError("cannot sync folder '" + dir + "': " + why);
  return Status::Ok();
}

Status WriteFileDurable(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());  // a stray temporary of a crashed earlier run with our pid
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot write '" + tmp + "': " + Errno());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = Errno();
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IoError("writing '" + tmp + "' failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0600) != 0 || ::fsync(fd) != 0) {
    const std::string why = Errno();
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::IoError("cannot flush '" + tmp + "': " + why);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(tmp.c_str());
    return Status::IoError("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
  return SyncDir(fs::path(path).parent_path().string());
}

Status AppendLineDurable(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot open '" + path + "' for appending: " + Errno());
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const std::string why = n < 0 ? Errno() : std::string("short write");
    ::close(fd);
    return Status::IoError("cannot append to '" + path + "': " + why);
  }
  if (::fsync(fd) != 0) {
    const std::string why = Errno();
    ::close(fd);
    return Status::IoError("cannot sync '" + path + "': " + why);
  }
  ::close(fd);
  return Status::Ok();
}

Status CopyFileDurable(const std::string& from, const std::string& to) {
  SY_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(from));
  return WriteFileDurable(to, bytes);
}

Result<FileLock> FileLock::Acquire(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot open lock file '" + path + "': " + Errno());
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const std::string why = Errno();
    ::close(fd);
    return Status::IoError("cannot lock '" + path + "': " + why);
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace switchyard::release
