//! warpscope on a real GPU: compile a kernel's `.cu` source with NVRTC for the present
//! device, run and time it, profile it under Nsight Compute, calibrate a traffic profile.
