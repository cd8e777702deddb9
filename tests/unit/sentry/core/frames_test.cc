// --frames: PNGs written by the writer process, read back with libpng and compared.
#include "sentry/core/frames.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace nvsentry::sentry {
namespace {

std::vector<uint8_t> ReadPng(const std::string& path, uint32_t* w, uint32_t* h) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return {};
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> out(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.data(), 0, nullptr)) return {};
  *w = image.width;
  *h = image.height;
  return out;
}

hostshim::sim::Frame Gradient(uint64_t sequence) {
  hostshim::sim::Frame f;
  f.sequence = sequence;
  f.width = 3;
  f.height = 2;
  f.pitch = 12;
  for (uint32_t i = 0; i < 6; ++i)
    for (uint8_t c : {uint8_t(i * 40), uint8_t(255 - i), uint8_t(sequence), uint8_t(255)})
      f.bytes.push_back(c);
  return f;
}

class Frames : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nvs-frames-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(Frames, EachFrameIsWrittenAsAPngOfItsPixels) {
  auto writer = FrameFileWriter::Start(dir_ + "/out");
  ASSERT_TRUE(writer.ok()) << writer.status();
  {
    FrameRecorder rec(*std::move(writer), 1000, 1 << 30);
    rec.Start();
    for (uint64_t s : {1, 3, 5}) rec.Presented(Gradient(s));
    rec.Flush();
    EXPECT_EQ(rec.counts().presented, 3u);
    EXPECT_EQ(rec.counts().written, 3u);
  }  // the writer has written everything it was sent once the recorder is gone
  for (int s : {1, 3, 5}) {
    uint32_t w = 0, h = 0;
    char name[64];
    snprintf(name, sizeof name, "/out/disp0-%06d.png", s);
    std::vector<uint8_t> px = ReadPng(dir_ + name, &w, &h);
    ASSERT_EQ(w, 3u) << name;
    ASSERT_EQ(h, 2u);
    EXPECT_EQ(px, Gradient(s).bytes) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out/disp0-000002.png"));
}

// The limits: past them no frame is wanted (so none is even read) and none is written.
TEST_F(Frames, NoMoreThanTheLimitIsWritten) {
  auto writer = FrameFileWriter::Start(dir_ + "/out");
  ASSERT_TRUE(writer.ok()) << writer.status();
  {
    FrameRecorder rec(*std::move(writer), 2, 1 << 30);
    rec.Start();
    for (uint64_t s = 1; s <= 5; ++s) {
      if (rec.Wanted()) rec.Presented(Gradient(s));
      rec.Flush();
    }
    EXPECT_EQ(rec.counts().written, 2u);
    EXPECT_EQ(rec.counts().dropped, 3u);
  }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/out")) (void)e, ++files;
  EXPECT_EQ(files, 2);
}

// A name taken after the start (planted while the guest runs) is never written through, and the
// frame that could not be written is an error at the end.
TEST_F(Frames, AnExistingFileIsNeverReplaced) {
  auto writer = FrameFileWriter::Start(dir_ + "/out");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/out/disp0-000001.png").c_str()), 0);
  FrameRecorder rec(*std::move(writer), 1000, 1 << 30);
  rec.Start();
  rec.Presented(Gradient(1));
  rec.Presented(Gradient(2));
  EXPECT_FALSE(rec.Finish()) << "a frame could not be written";
  struct stat st;
  ASSERT_EQ(lstat((dir_ + "/out/disp0-000001.png").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the planted link is still a link, nothing written through";
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/out/disp0-000002.png"));
}

// What DIR holds at the start is left alone: this run's frames are numbered after its highest.
TEST_F(Frames, ASecondRunNumbersOnAfterTheFramesThere) {
  ASSERT_EQ(mkdir((dir_ + "/out").c_str(), 0755), 0);
  for (const char* name : {"disp0-000007.png", "disp1-w2-000012.png", "notes.txt", "disp0-x.png"})
    close(open((dir_ + "/out/" + name).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  auto writer = FrameFileWriter::Start(dir_ + "/out");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(writer->numbered_after(), 12u);
  FrameRecorder rec(*std::move(writer), 1000, 1 << 30);
  rec.Start();
  rec.Presented(Gradient(1));
  EXPECT_TRUE(rec.Finish());
  uint32_t w = 0, h = 0;
  EXPECT_EQ(ReadPng(dir_ + "/out/disp0-000013.png", &w, &h), Gradient(1).bytes);
  EXPECT_EQ(std::filesystem::file_size(dir_ + "/out/disp0-000007.png"), 0u) << "left alone";
}

TEST(FrameNumbers, OnlyTheRecordersNamesHaveOne) {
  EXPECT_EQ(FrameNumberOf("disp0-000012.png"), 12u);
  EXPECT_EQ(FrameNumberOf("disp1-w2-000003.png"), 3u);
  EXPECT_EQ(FrameNumberOf("disp0-1234567.png"), 1234567u);
  EXPECT_EQ(FrameNumberOf("disp0-.png"), 0u);
  EXPECT_EQ(FrameNumberOf("disp0-12a.png"), 0u);
  EXPECT_EQ(FrameNumberOf("frame-000012.png"), 0u);
  EXPECT_EQ(FrameNumberOf("disp0-000012.jpg"), 0u);
  EXPECT_EQ(FrameNumberOf("disp0-99999999999999999999.png"), 0u) << "too long to be ours";
}

TEST_F(Frames, ADirectoryThatCannotBeMadeIsAClearError) {
  auto writer = FrameFileWriter::Start(dir_ + "/missing/parent");
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("--frames: cannot make"), std::string::npos);
}

}  // namespace
}  // namespace nvsentry::sentry
