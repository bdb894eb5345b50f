/**
 * 2mm.cuh: This file is part of a PolyBench/GPU-style test kernel (written for warpscope's
 * tests in the layout of PolyBench-ACC's 2mm).
 */
#ifndef TWOMM_CUH
# define TWOMM_CUH

/* Default to STANDARD_DATASET. */
# if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(LARGE_DATASET)
#  define STANDARD_DATASET
# endif

/* Do not define anything if the user manually defines the size. */
# if !defined(NI) && !defined(NJ) && !defined(NK) && !defined(NL)
/* Define the possible dataset sizes. */
#  ifdef MINI_DATASET
#   define NI 32
#   define NJ 32
#   define NK 32
#   define NL 32
#  endif

#  ifdef SMALL_DATASET
#   define NI 128
#   define NJ 128
#   define NK 128
#   define NL 128
#  endif

#  ifdef STANDARD_DATASET /* Default if unspecified. */
#   define NI 1024 // rows of A
#   define NJ 1024 /* columns of B */
#   define NK 1024
#   define NL 1024
#  endif
# endif /* !N */

# define _PB_NI POLYBENCH_LOOP_BOUND(NI, ni)
# define _PB_NJ POLYBENCH_LOOP_BOUND(NJ, nj)
# define _PB_NL POLYBENCH_LOOP_BOUND(NL, nl)
# define POLYBENCH_LOOP_BOUND(x, y) x

# ifndef DATA_TYPE
#  define DATA_TYPE float
#  define DATA_PRINTF_MODIFIER "%0.2lf "
# endif

/* Thread block dimensions */
#define DIM_THREAD_BLOCK_X 32 // threads per block in x
#define DIM_THREAD_BLOCK_Y 8  // threads per block in y

#endif /* !TWOMM_CUH */
