//! `tessera run` of the byte and text kernels: results against values
//! worked out here (plain loops, `std`, RFC 4648's vectors), and malformed
//! calls or inputs refused without writing.

mod common;

use common::*;

fn i64_of(dir: &TempDir, file: &str) -> i64 {
    let r = read_npy(&dir.path(file));
    assert!(r.shape.is_empty(), "a 0-d result");
    i64::from_le_bytes(r.data[..8].try_into().unwrap())
}

fn call(dir: &TempDir, kernel: &str, attrs: &str, operands: &[&str], results: &[&str]) -> Run {
    let ops: Vec<String> = operands
        .iter()
        .map(|o| format!(r#""{o}": {{"npy": "{o}.npy"}}"#))
        .collect();
    let res: Vec<String> = results
        .iter()
        .map(|r| format!(r#""{r}": {{"npy": "out_{r}.npy"}}"#))
        .collect();
    run_call(
        dir,
        &format!(
            r#"{{"kernel": "{kernel}", "attrs": {{{attrs}}}, "operands": {{{}}}, "results": {{{}}}}}"#,
            ops.join(", "),
            res.join(", ")
        ),
    )
}

#[test]
fn searches_counts_and_comparisons() {
    let dir = TempDir::new("bytes-search");
    let text = b"one two three two one";
    dir.write("x.npy", &npy_u8(&[text.len()], text));
    dir.write("y.npy", &npy_u8(&[7], b"one tWx"));
    dir.write("needle.npy", &npy_u8(&[3], b"two"));
    for (kernel, attrs, ops, want) in [
        ("index_byte", r#""byte": 116"#, &["x"][..], 4i64),
        ("last_index_byte", r#""byte": 116"#, &["x"][..], 14),
        ("count_byte", r#""byte": 111"#, &["x"][..], 4),
        ("index_byte", r#""byte": 0"#, &["x"][..], -1),
        ("index_any", r#""set": [104, 119]"#, &["x"][..], 5),
        ("count_any", r#""set": [32]"#, &["x"][..], 4),
        ("index_not_any", r#""set": [111, 110]"#, &["x"][..], 2),
        ("index", "", &["x", "needle"][..], 4),
        ("last_index", "", &["x", "needle"][..], 14),
        ("count_seq", "", &["x", "needle"][..], 2),
        ("common_prefix", "", &["x", "y"][..], 5),
        // "one tw…" after "one tW…": 'w' (0x77) above 'W' (0x57).
        ("compare", "", &["x", "y"][..], 1),
        ("utf8_valid_up_to", "", &["x"][..], text.len() as i64),
        (
            "popcount",
            "",
            &["x"][..],
            text.iter().map(|b| b.count_ones() as i64).sum(),
        ),
    ] {
        let run = call(&dir, kernel, attrs, ops, &["r"]);
        assert_eq!(run.code, Some(0), "{kernel}: {}", run.stderr);
        assert_eq!(i64_of(&dir, "out_r.npy"), want, "{kernel} {attrs}");
    }
    let run = call(&dir, "index_all", r#""byte": 111"#, &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let y = read_npy(&dir.path("out_y.npy"));
    let got: Vec<i64> = y
        .data
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<i64> = (0..text.len())
        .filter(|&i| text[i] == b'o')
        .map(|i| i as i64)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn encoders_and_decoders_round_trip() {
    let dir = TempDir::new("bytes-codec");
    // RFC 4648 §10: "foobar" is "Zm9vYmFy".
    dir.write("x.npy", &npy_u8(&[6], b"foobar"));
    let run = call(&dir, "base64_encode", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, b"Zm9vYmFy");
    let run = call(&dir, "hex_encode", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, b"666f6f626172");
    dir.write("x.npy", &npy_u8(&[6], b"Zm9vYg"));
    let run = call(&dir, "base64_decode", r#""pad": false"#, &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, b"foob");
    // Decimal fields, then zigzag and varints of i64.
    dir.write("x.npy", &npy_u8(&[11], b"3,-1,0,-300"));
    let run = call(&dir, "parse_ints", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let vals = read_npy(&dir.path("out_y.npy")).data;
    dir.write("x.npy", &npy_bytes("<i8", false, &[4], &vals, 1));
    let run = call(&dir, "zigzag_encode", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let z = read_npy(&dir.path("out_y.npy"));
    assert_eq!(z.descr, "<u8");
    dir.write("x.npy", &npy_bytes("<u8", false, &[4], &z.data, 1));
    let run = call(&dir, "varint_encode", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, [6, 1, 0, 0xd7, 0x04]);
    // 7-bit packing of 0..40: 40·7 = 280 bits in 9 words.
    let v: Vec<u8> = (0..40u32).flat_map(|x| x.to_le_bytes()).collect();
    dir.write("x.npy", &npy_bytes("<u4", false, &[40], &v, 1));
    let run = call(&dir, "bit_pack_u32", r#""bits": 7"#, &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let packed = read_npy(&dir.path("out_y.npy"));
    assert_eq!(packed.shape, vec![9]);
    dir.write("x.npy", &npy_bytes("<u4", false, &[9], &packed.data, 1));
    let run = call(
        &dir,
        "bit_unpack_u32",
        r#""bits": 7, "count": 40"#,
        &["x"],
        &["y"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, v);
}

#[test]
fn bitwise_maps_widen_narrow_and_fill() {
    let dir = TempDir::new("bytes-logic");
    let (x, y) = (b"\x0f\xf0\xaa\x55\x00\xff", b"\xff\x0f\x0f\xf0\x12\x34");
    dir.write("x.npy", &npy_u8(&[6], x));
    dir.write("y.npy", &npy_u8(&[6], y));
    type Plain = fn(u8, u8) -> u8;
    let plain: [(&str, Plain); 4] = [
        ("bytes_and", |a, b| a & b),
        ("bytes_or", |a, b| a | b),
        ("bytes_xor", |a, b| a ^ b),
        ("bytes_and_not", |a, b| a & !b),
    ];
    for (kernel, f) in plain {
        let run = call(&dir, kernel, "", &["x", "y"], &["z"]);
        assert_eq!(run.code, Some(0), "{kernel}: {}", run.stderr);
        let want: Vec<u8> = x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect();
        assert_eq!(read_npy(&dir.path("out_z.npy")).data, want, "{kernel}");
    }
    let run = call(&dir, "bytes_not", "", &["x"], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let want: Vec<u8> = x.iter().map(|&a| !a).collect();
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, want);
    let run = call(&dir, "bytes_fill", r#""byte": 7, "count": 5"#, &[], &["y"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_npy(&dir.path("out_y.npy")).data, [7u8; 5]);
    // Widening then narrowing gives the bytes back; narrowing keeps the
    // low byte of wider units.
    for (widen, narrow, descr, w) in [
        ("widen_u8_u16", "narrow_u16_u8", "<u2", 2usize),
        ("widen_u8_u32", "narrow_u32_u8", "<u4", 4),
    ] {
        let run = call(&dir, widen, "", &["x"], &["y"]);
        assert_eq!(run.code, Some(0), "{widen}: {}", run.stderr);
        let wide = read_npy(&dir.path("out_y.npy"));
        assert_eq!(wide.descr, descr);
        let want: Vec<u8> = x
            .iter()
            .flat_map(|&b| {
                let mut u = vec![0u8; w];
                u[0] = b;
                u
            })
            .collect();
        assert_eq!(wide.data, want, "{widen}");
        let mut units = wide.data.clone();
        units[1] = 0x12; // unit 0 gets high bits: its low byte stays
        dir.write("x2.npy", &npy_bytes(descr, false, &[6], &units, 1));
        let run = run_call(
            &dir,
            &format!(
                r#"{{"kernel": "{narrow}", "operands": {{"x": {{"npy": "x2.npy"}}}}, "results": {{"y": {{"npy": "out_n.npy"}}}}}}"#
            ),
        );
        assert_eq!(run.code, Some(0), "{narrow}: {}", run.stderr);
        assert_eq!(read_npy(&dir.path("out_n.npy")).data, x, "{narrow}");
    }
    // Unequal lengths are refused without writing.
    dir.write("y.npy", &npy_u8(&[5], &y[..5]));
    std::fs::remove_file(dir.path("out_z.npy")).unwrap();
    call(&dir, "bytes_xor", "", &["x", "y"], &["z"]).assert_refused(1, "6 needed");
    assert!(!dir.path("out_z.npy").exists());
}

#[test]
fn bad_input_is_refused_without_writing() {
    let dir = TempDir::new("bytes-bad");
    dir.write("x.npy", &npy_u8(&[3], b"abz"));
    for (kernel, attrs, result, code, needle) in [
        ("hex_decode", "", "y", 1, "hex"),
        ("base64_decode", "", "y", 1, "base64"),
        ("index_byte", r#""byte": 300"#, "r", 2, "byte"),
        ("index_any", r#""set": "ab""#, "r", 2, "set"),
        ("base64_encode", r#""alphabet": "mime""#, "y", 2, "alphabet"),
        ("parse_ints", "", "y", 1, "decimal"),
    ] {
        let run = call(&dir, kernel, attrs, &["x"], &[result]);
        run.assert_refused(code, needle);
        assert!(
            !dir.path(&format!("out_{result}.npy")).exists(),
            "{kernel} wrote a result"
        );
    }
    dir.write("x.npy", &npy_u8(&[1], &[0x80]));
    call(&dir, "varint_decode", "", &["x"], &["y"]).assert_refused(1, "varint");
    let v: Vec<u8> = [1u32, 200].iter().flat_map(|x| x.to_le_bytes()).collect();
    dir.write("x.npy", &npy_bytes("<u4", false, &[2], &v, 1));
    call(&dir, "bit_pack_u32", r#""bits": 7"#, &["x"], &["y"]).assert_refused(1, "bit");
    assert!(!dir.path("out_y.npy").exists());
}
