//! The present GPU through the CUDA driver API (cudarc's `sys` layer): its properties, device
//! memory, modules loaded from NVRTC's CUBIN, launches with raw parameter bytes, and timing
//! with CUDA events.
//!
//! Everything runs on the device's primary context, on the legacy default stream, from the
//! thread that opened the [`Device`] (the types are neither `Send` nor `Sync`).

use crate::error::{Error, Result};
use crate::load;
use cudarc::driver::sys;
use serde::Serialize;
use std::ffi::{c_void, CStr, CString};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What the driver says about one GPU. Units as named.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceInfo {
    /// Device ordinal (as `CUDA_VISIBLE_DEVICES` leaves them).
    pub ordinal: usize,
    /// Product name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (u32, u32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// L2 cache, bytes.
    pub l2_bytes: u64,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Most resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Most resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// Most shared memory one block may opt in to, bytes.
    pub max_shared_per_block_optin: u32,
    /// SM clock (the driver's "clock rate", the boost clock), MHz.
    pub sm_clock_mhz: u32,
    /// Memory clock, MHz.
    pub memory_clock_mhz: u32,
    /// Memory bus width, bits.
    pub bus_width_bits: u32,
    /// Driver's CUDA version, e.g. "13.0".
    pub driver_cuda: String,
}

impl DeviceInfo {
    /// "9.0".
    pub fn cc_string(&self) -> String {
        format!("{}.{}", self.cc.0, self.cc.1)
    }
}

/// The CUDA error name of a driver result, e.g. "CUDA_ERROR_ILLEGAL_ADDRESS".
pub fn error_name(r: sys::CUresult) -> String {
    format!("{r:?}")
}

fn error_string(r: sys::CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string (or fails).
    let ok = unsafe { sys::cuGetErrorString(r, &mut p) } == sys::CUresult::CUDA_SUCCESS;
    if ok && !p.is_null() {
        // SAFETY: the driver returned a NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    } else {
        "no description".into()
    }
}

pub(crate) fn check(r: sys::CUresult, call: &str, doing: impl FnOnce() -> String) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda {
            call: call.to_string(),
            name: error_name(r),
            doing: doing(),
        })
    }
}

fn init() -> Result<()> {
    load::driver()?;
    // SAFETY: plain driver call; the library is loaded and has the symbol (load::driver).
    let r = unsafe { sys::cuInit(0) };
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        sys::CUresult::CUDA_ERROR_NO_DEVICE => Err(Error::NoDevice(
            "the CUDA driver is installed but sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE); check CUDA_VISIBLE_DEVICES".into(),
        )),
        sys::CUresult::CUDA_ERROR_STUB_LIBRARY => Err(Error::NoDriver(
            "the libcuda.so found is the toolkit's stub, not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY)".into(),
        )),
        r => Err(Error::NoDevice(format!(
            "cuInit failed with {} ({})",
            error_name(r),
            error_string(r)
        ))),
    }
}

/// Number of GPUs the driver sees. Errors as [`Device::open`].
pub fn device_count() -> Result<usize> {
    init()?;
    let mut n = 0;
    // SAFETY: plain driver call writing one int.
    check(
        unsafe { sys::cuDeviceGetCount(&mut n) },
        "cuDeviceGetCount",
        || "counting GPUs".into(),
    )?;
    Ok(n.max(0) as usize)
}

fn get_device(ordinal: usize) -> Result<sys::CUdevice> {
    let n = device_count()?;
    if n == 0 {
        return Err(Error::NoDevice("the CUDA driver sees no GPU".into()));
    }
    if ordinal >= n {
        return Err(Error::Argument(format!(
            "--device {ordinal}: there are {n} GPU(s), numbered from 0"
        )));
    }
    let mut dev = 0;
    // SAFETY: plain driver call writing one handle.
    check(
        unsafe { sys::cuDeviceGet(&mut dev, ordinal as i32) },
        "cuDeviceGet",
        || format!("opening GPU {ordinal}"),
    )?;
    Ok(dev)
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<u32> {
    let mut v = 0;
    // SAFETY: plain driver call writing one int.
    check(
        unsafe { sys::cuDeviceGetAttribute(&mut v, a, dev) },
        "cuDeviceGetAttribute",
        || format!("reading {a:?}"),
    )?;
    Ok(v.max(0) as u32)
}

/// The properties of GPU `ordinal`, without creating a context (cheap; used by `verify`
/// before it hands the GPU to Nsight Compute).
///
/// Errors: [`Error::NoDriver`], [`Error::NoDevice`], [`Error::Argument`] for an ordinal past
/// the last GPU.
pub fn device_info(ordinal: usize) -> Result<DeviceInfo> {
    use sys::CUdevice_attribute::*;
    let dev = get_device(ordinal)?;
    let mut name = vec![0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 bytes, as passed.
    check(
        unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev) },
        "cuDeviceGetName",
        || "reading the GPU's name".into(),
    )?;
    // SAFETY: the driver NUL-terminates the name within the buffer.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut mem = 0usize;
    // SAFETY: plain driver call writing one size.
    check(
        unsafe { sys::cuDeviceTotalMem_v2(&mut mem, dev) },
        "cuDeviceTotalMem",
        || "reading the GPU's memory size".into(),
    )?;
    let mut ver = 0;
    // SAFETY: plain driver call writing one int.
    check(
        unsafe { sys::cuDriverGetVersion(&mut ver) },
        "cuDriverGetVersion",
        || "reading the driver version".into(),
    )?;
    Ok(DeviceInfo {
        ordinal,
        name,
        cc: (
            attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        sms: attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_bytes: attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        memory_bytes: mem as u64,
        max_threads_per_sm: attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_blocks_per_sm: attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        max_shared_per_block_optin: attr(
            dev,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?,
        sm_clock_mhz: attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000,
        memory_clock_mhz: attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? / 1000,
        bus_width_bits: attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        driver_cuda: format!("{}.{}", ver / 1000, (ver % 1000) / 10),
    })
}

pub(crate) struct Ctx {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

impl Ctx {
    pub(crate) fn make_current(&self) -> Result<()> {
        // SAFETY: the context is retained for as long as this Ctx lives.
        check(
            unsafe { sys::cuCtxSetCurrent(self.ctx) },
            "cuCtxSetCurrent",
            || "selecting the GPU's context".into(),
        )
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: releases the retain of Device::open; errors at teardown are ignored.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.dev);
        }
    }
}

/// An opened GPU: its primary context, current on this thread.
pub struct Device {
    pub(crate) ctx: Rc<Ctx>,
    /// The GPU's properties.
    pub info: DeviceInfo,
}

/// Device memory; freed when dropped.
pub struct Buffer {
    ctx: Rc<Ctx>,
    ptr: sys::CUdeviceptr,
    bytes: u64,
}

impl Buffer {
    /// The device address (what a pointer parameter receives).
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Sets every byte to zero (synchronous).
    pub fn zero(&self) -> Result<()> {
        self.ctx.make_current()?;
        // SAFETY: the range lies inside this allocation.
        check(
            unsafe { sys::cuMemsetD8_v2(self.ptr, 0, self.bytes as usize) },
            "cuMemsetD8",
            || format!("zeroing {} bytes", self.bytes),
        )?;
        // SAFETY: plain driver call.
        check(
            unsafe { sys::cuCtxSynchronize() },
            "cuCtxSynchronize",
            || "zeroing memory".into(),
        )
    }

    /// Copies `data` to the start of the buffer (synchronous). Errors: data longer than the
    /// buffer ([`Error::Argument`]), a failed copy.
    pub fn write(&self, data: &[u8]) -> Result<()> {
        if data.len() as u64 > self.bytes {
            return Err(Error::Argument(format!(
                "{} bytes do not fit in a buffer of {}",
                data.len(),
                self.bytes
            )));
        }
        self.ctx.make_current()?;
        // SAFETY: `data` is valid for reads of its length; the destination range is inside.
        check(
            unsafe { sys::cuMemcpyHtoD_v2(self.ptr, data.as_ptr() as *const c_void, data.len()) },
            "cuMemcpyHtoD",
            || format!("copying {} bytes to the GPU", data.len()),
        )
    }

    /// Copies the whole buffer to the host (synchronous).
    pub fn read(&self) -> Result<Vec<u8>> {
        self.ctx.make_current()?;
        let mut v = vec![0u8; self.bytes as usize];
        // SAFETY: `v` is valid for writes of the buffer's length.
        check(
            unsafe { sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.ptr, v.len()) },
            "cuMemcpyDtoH",
            || format!("copying {} bytes from the GPU", self.bytes),
        )?;
        Ok(v)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.ctx.make_current().is_ok() {
            // SAFETY: the pointer came from cuMemAlloc and is freed once.
            unsafe {
                sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

struct ModuleInner {
    ctx: Rc<Ctx>,
    module: sys::CUmodule,
}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if self.ctx.make_current().is_ok() {
            // SAFETY: loaded by cuModuleLoadData, unloaded once.
            unsafe {
                sys::cuModuleUnload(self.module);
            }
        }
    }
}

/// A loaded module (one NVRTC program's CUBIN).
pub struct Module {
    inner: Rc<ModuleInner>,
}

/// A kernel of a loaded module.
pub struct Function {
    _module: Rc<ModuleInner>,
    f: sys::CUfunction,
    /// The name shown in messages (as the user wrote it, e.g. `offset<float>`).
    pub name: String,
}

impl Module {
    /// The kernel whose symbol is `lowered` (NVRTC's lowered, i.e. mangled, name), shown as
    /// `name` in messages.
    pub fn function(&self, lowered: &str, name: &str) -> Result<Function> {
        self.inner.ctx.make_current()?;
        let c = CString::new(lowered)
            .map_err(|_| Error::Argument(format!("kernel symbol {lowered:?} contains NUL")))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: module is loaded; `c` is NUL-terminated.
        check(
            unsafe { sys::cuModuleGetFunction(&mut f, self.inner.module, c.as_ptr()) },
            "cuModuleGetFunction",
            || format!("looking up kernel {name} ({lowered})"),
        )?;
        Ok(Function {
            _module: self.inner.clone(),
            f,
            name: name.to_string(),
        })
    }
}

impl Function {
    /// Registers per thread (from the CUBIN).
    pub fn registers(&self) -> Result<u32> {
        let mut v = 0;
        // SAFETY: plain driver call on a live function.
        check(
            unsafe {
                sys::cuFuncGetAttribute(
                    &mut v,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
                    self.f,
                )
            },
            "cuFuncGetAttribute",
            || format!("reading the registers of {}", self.name),
        )?;
        Ok(v.max(0) as u32)
    }
}

/// A launch: kernel, shape, dynamic shared memory and the parameter bytes (one vector per
/// kernel parameter, each exactly as long as the parameter's type: pointers 8 bytes).
pub struct Launch<'a> {
    pub function: &'a Function,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of `extern __shared__` memory.
    pub shared_bytes: u32,
    pub params: &'a [Vec<u8>],
}

/// Timing of repeated launches: seconds per launch, one value per sample.
#[derive(Clone, Debug)]
pub struct Samples {
    pub seconds: Vec<f64>,
}

struct Event(sys::CUevent);

impl Event {
    fn new() -> Result<Event> {
        let mut e = std::ptr::null_mut();
        // SAFETY: plain driver call creating an event with timing.
        check(
            unsafe { sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DEFAULT as u32) },
            "cuEventCreate",
            || "creating a CUDA event".into(),
        )?;
        Ok(Event(e))
    }

    fn record(&self) -> Result<()> {
        // SAFETY: live event, default stream.
        check(
            unsafe { sys::cuEventRecord(self.0, std::ptr::null_mut()) },
            "cuEventRecord",
            || "recording a CUDA event".into(),
        )
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        unsafe {
            sys::cuEventDestroy_v2(self.0);
        }
    }
}

fn elapsed_ms(start: &Event, end: &Event) -> Result<f64> {
    let mut ms = 0f32;
    let r = if load::driver_has("cuEventElapsedTime_v2") {
        // SAFETY: both events recorded and complete.
        unsafe { sys::cuEventElapsedTime_v2(&mut ms, start.0, end.0) }
    } else {
        // Drivers before CUDA 12.8 have only the first version, which the CUDA 13 bindings
        // do not declare.
        type F = unsafe extern "C" fn(*mut f32, sys::CUevent, sys::CUevent) -> sys::CUresult;
        // SAFETY: the driver is loaded; the symbol has this signature in every driver.
        let lib = unsafe { sys::culib() };
        match unsafe { lib.get::<F>(b"cuEventElapsedTime") } {
            Ok(f) => unsafe { f(&mut ms, start.0, end.0) },
            Err(_) => {
                return Err(Error::NoDevice(
                    "the CUDA driver has no cuEventElapsedTime".into(),
                ))
            }
        }
    };
    check(r, "cuEventElapsedTime", || {
        "reading a CUDA event timer".into()
    })?;
    Ok(ms as f64)
}

impl Device {
    /// Opens GPU `ordinal`: loads the driver, retains the primary context and makes it
    /// current on this thread.
    ///
    /// Errors: [`Error::NoDriver`] (no libcuda.so), [`Error::NoDevice`] (no GPU, or a driver
    /// too old), [`Error::Argument`] (no such ordinal), [`Error::Cuda`].
    pub fn open(ordinal: usize) -> Result<Device> {
        let info = device_info(ordinal)?;
        let dev = get_device(ordinal)?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: plain driver call; released in Ctx::drop.
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) },
            "cuDevicePrimaryCtxRetain",
            || format!("opening {}", info.name),
        )?;
        let ctx = Rc::new(Ctx { dev, ctx });
        ctx.make_current()?;
        Ok(Device { ctx, info })
    }

    /// A device attribute's value (e.g. the texture pitch alignment in bytes).
    ///
    /// Errors: [`Error::Cuda`].
    pub fn attribute(&self, a: sys::CUdevice_attribute) -> Result<u32> {
        attr(self.ctx.dev, a)
    }

    /// Free and total device memory, bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        self.ctx.make_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: plain driver call writing two sizes.
        check(
            unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) },
            "cuMemGetInfo",
            || "reading free GPU memory".into(),
        )?;
        Ok((free as u64, total as u64))
    }

    /// Allocates `bytes` of device memory (at least 1 byte is allocated). Contents
    /// undefined; see [`Buffer::zero`].
    ///
    /// Errors: [`Error::Cuda`] (`CUDA_ERROR_OUT_OF_MEMORY` names the size).
    pub fn alloc(&self, bytes: u64) -> Result<Buffer> {
        self.ctx.make_current()?;
        let mut ptr = 0;
        // SAFETY: plain driver call; freed in Buffer::drop.
        check(
            unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(1) as usize) },
            "cuMemAlloc",
            || {
                format!(
                    "allocating {bytes} bytes ({:.2} GiB)",
                    bytes as f64 / (1u64 << 30) as f64
                )
            },
        )?;
        Ok(Buffer {
            ctx: self.ctx.clone(),
            ptr,
            bytes,
        })
    }

    /// Loads a CUBIN (or PTX) image, e.g. [`warpscope_toolkit::nvrtc::Compiled::image`].
    pub fn load(&self, image: &[u8]) -> Result<Module> {
        self.ctx.make_current()?;
        let mut m = std::ptr::null_mut();
        // cuModuleLoadData reads a PTX image as a C string: make sure one ends in NUL (a
        // CUBIN is an ELF file, starting 0x7f 'E' 'L' 'F').
        let mut owned = Vec::new();
        if !image.starts_with(b"\x7fELF") && image.last() != Some(&0) {
            owned.extend_from_slice(image);
            owned.push(0);
        }
        let data: &[u8] = if owned.is_empty() { image } else { &owned };
        // SAFETY: `data` is a complete CUBIN/ELF or NUL-terminated PTX image.
        check(
            unsafe { sys::cuModuleLoadData(&mut m, data.as_ptr() as *const c_void) },
            "cuModuleLoadData",
            || "loading the compiled kernel".into(),
        )?;
        Ok(Module {
            inner: Rc::new(ModuleInner {
                ctx: self.ctx.clone(),
                module: m,
            }),
        })
    }

    /// Enqueues one launch on the default stream (returns before the kernel ends). Sets the
    /// kernel's dynamic shared-memory limit first when `shared_bytes` exceeds 48 KiB.
    ///
    /// Errors: [`Error::Cuda`] from cuLaunchKernel (e.g. `CUDA_ERROR_INVALID_VALUE` for a
    /// block too large), or an error left by an earlier faulting kernel.
    pub fn launch(&self, l: &Launch) -> Result<()> {
        self.ctx.make_current()?;
        if l.shared_bytes > 48 * 1024 {
            // SAFETY: plain driver call on a live function.
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        l.function.f,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        l.shared_bytes as i32,
                    )
                },
                "cuFuncSetAttribute",
                || {
                    format!(
                        "allowing {} bytes of dynamic shared memory for {}",
                        l.shared_bytes, l.function.name
                    )
                },
            )?;
        }
        let mut ptrs: Vec<*mut c_void> =
            l.params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
        // SAFETY: each pointer addresses a parameter's bytes, alive for the call (the driver
        // copies them before returning).
        let r = unsafe {
            sys::cuLaunchKernel(
                l.function.f,
                l.grid[0],
                l.grid[1],
                l.grid[2],
                l.block[0],
                l.block[1],
                l.block[2],
                l.shared_bytes,
                std::ptr::null_mut(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if is_fault(r) {
            return Err(fault(&l.function.name, r));
        }
        check(r, "cuLaunchKernel", || {
            format!(
                "launching {} with grid ({},{},{}) block ({},{},{}) and {} bytes of dynamic shared memory",
                l.function.name, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.shared_bytes
            )
        })
    }

    /// Waits until all work enqueued so far has finished, at most `timeout`.
    ///
    /// Errors: [`Error::KernelFault`] naming `kernel` and the CUDA error when a kernel
    /// faulted; [`Error::Timeout`] when it is still running after `timeout`.
    pub fn wait(&self, kernel: &str, timeout: Duration) -> Result<()> {
        self.ctx.make_current()?;
        let e = Event::new()?;
        e.record()?;
        self.wait_event(&e, kernel, timeout)?;
        // SAFETY: plain driver call.
        let r = unsafe { sys::cuCtxSynchronize() };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(fault(kernel, r));
        }
        Ok(())
    }

    fn wait_event(&self, e: &Event, kernel: &str, timeout: Duration) -> Result<()> {
        let t0 = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            // SAFETY: live, recorded event.
            let r = unsafe { sys::cuEventQuery(e.0) };
            match r {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {
                    if t0.elapsed() > timeout {
                        return Err(Error::Timeout {
                            kernel: kernel.to_string(),
                            seconds: timeout.as_secs_f64(),
                        });
                    }
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(Duration::from_millis(2));
                }
                r => return Err(fault(kernel, r)),
            }
        }
    }

    /// Times `l`: `warmup` launches first (waited for), then `samples` samples of
    /// `per_sample` back-to-back launches, each sample between two CUDA events on the
    /// default stream. Returns seconds per launch for each sample.
    ///
    /// Errors: as [`Device::launch`] and [`Device::wait`] (`timeout` applies to each sample).
    pub fn time(
        &self,
        l: &Launch,
        warmup: u32,
        samples: u32,
        per_sample: u32,
        timeout: Duration,
    ) -> Result<Samples> {
        for _ in 0..warmup {
            self.launch(l)?;
        }
        self.wait(&l.function.name, timeout)?;
        let (start, end) = (Event::new()?, Event::new()?);
        let per = per_sample.max(1);
        let mut seconds = Vec::with_capacity(samples as usize);
        for _ in 0..samples.max(1) {
            start.record()?;
            for _ in 0..per {
                self.launch(l)?;
            }
            end.record()?;
            self.wait_event(&end, &l.function.name, timeout)?;
            seconds.push(elapsed_ms(&start, &end)? * 1e-3 / per as f64);
        }
        Ok(Samples { seconds })
    }
}

/// Errors a kernel leaves behind while running (sticky: the context is lost).
fn is_fault(r: sys::CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
    )
}

fn fault(kernel: &str, r: sys::CUresult) -> Error {
    Error::KernelFault {
        kernel: kernel.to_string(),
        name: error_name(r),
        description: error_string(r),
    }
}
