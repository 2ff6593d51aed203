//! Pages compressed with one zstd context for every column chunk a writer thread writes.
//!
//! Why: the parquet crate (60) makes a zstd compressor and a decompressor for each column
//! chunk it writes (`GenericColumnWriter::new` → `create_codec`), and each new zstd context
//! asks the CPU for its features (`ZSTD_cpuid`: three `cpuid` instructions for a compressor,
//! three more for a decompressor; zstd 1.5.7, `lib/common/cpu.h`, `ZSTD_initCCtx` in
//! `compress/zstd_compress.c`, `ZSTD_initDCtx_internal` in `decompress/zstd_decompress.c`).
//! In a virtual machine `cpuid` traps to the hypervisor: 4.8 µs each on this project's
//! machine, ≈29 µs per column chunk, ≈2 ms per run of the RFC 7928 pack, whose runs write
//! ≈75 small column chunks each (docs/performance.md, "The whole command").
//!
//! Here a column chunk is encoded by the parquet crate's own column writer, told to leave its
//! pages uncompressed, into a buffer; this page writer compresses each page as the crate's
//! zstd codec does (`zstd::bulk`, the same level, the whole data page v1 or dictionary page
//! buffer) but with the caller's context, and the chunk is appended to the row group with
//! its metadata naming zstd (`append_column`). The bytes of the file are those the crate
//! writes itself: zstd's output depends on the input and the parameters only, not on
//! whether the context is new (checked when this was written: the RFC 7928 pack's 1,700
//! files byte for byte equal to the crate's own writer's).

use std::io::Write;

use bytes::Bytes;
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::errors::{ParquetError, Result};
use parquet::file::writer::SerializedPageWriter;
use zstd::bulk::Compressor;

/// A page writer that zstd-compresses each page before `inner` writes it.
pub struct ZstdPages<'a, W: Write + Send> {
    inner: SerializedPageWriter<'a, W>,
    zstd: &'a mut Compressor<'static>,
}

impl<'a, W: Write + Send> ZstdPages<'a, W> {
    pub fn new(inner: SerializedPageWriter<'a, W>, zstd: &'a mut Compressor<'static>) -> Self {
        ZstdPages { inner, zstd }
    }

    fn compress(&mut self, input: &[u8]) -> Result<Bytes> {
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(input.len()));
        self.zstd
            .compress_to_buffer(input, &mut out)
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        Ok(Bytes::from(out))
    }
}

impl<W: Write + Send> PageWriter for ZstdPages<'_, W> {
    fn write_page(&mut self, page: CompressedPage) -> Result<PageWriteSpec> {
        let uncompressed_size = page.uncompressed_size();
        let compressed = match page.compressed_page() {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                statistics,
            } => Page::DataPage {
                buf: self.compress(buf)?,
                num_values: *num_values,
                encoding: *encoding,
                def_level_encoding: *def_level_encoding,
                rep_level_encoding: *rep_level_encoding,
                statistics: statistics.clone(),
            },
            Page::DictionaryPage {
                buf,
                num_values,
                encoding,
                is_sorted,
            } => Page::DictionaryPage {
                buf: self.compress(buf)?,
                num_values: *num_values,
                encoding: *encoding,
                is_sorted: *is_sorted,
            },
            // Version 2 pages compress their values only; the files here are version 1.
            Page::DataPageV2 { .. } => {
                return Err(ParquetError::General(
                    "a data page v2 reached the zstd page writer".into(),
                ));
            },
        };
        self.inner
            .write_page(CompressedPage::new(compressed, uncompressed_size))
    }

    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
}
