//! Placeholder until the rotation module lands.
#![allow(missing_docs)]
use glam::DMat3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
    Z,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::upper_case_acronyms)]
pub enum RotationOrder {
    XYZ,
    XZY,
    YXZ,
    YZX,
    ZXY,
    ZYX,
}

impl RotationOrder {
    pub fn from_axes(axes: &[Axis]) -> Option<RotationOrder> {
        use Axis::*;
        Some(match axes {
            [X, Y, Z] => RotationOrder::XYZ,
            [X, Z, Y] => RotationOrder::XZY,
            [Y, X, Z] => RotationOrder::YXZ,
            [Y, Z, X] => RotationOrder::YZX,
            [Z, X, Y] => RotationOrder::ZXY,
            [Z, Y, X] => RotationOrder::ZYX,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RotationOrder::XYZ => "XYZ",
            RotationOrder::XZY => "XZY",
            RotationOrder::YXZ => "YXZ",
            RotationOrder::YZX => "YZX",
            RotationOrder::ZXY => "ZXY",
            RotationOrder::ZYX => "ZYX",
        }
    }
}

pub fn apply_axis_rotation(m: &mut DMat3, axis: Axis, sin: f64, cos: f64) {
    let (a, b) = match axis {
        Axis::X => (m.y_axis, m.z_axis),
        Axis::Y => (m.z_axis, m.x_axis),
        Axis::Z => (m.x_axis, m.y_axis),
    };
    let na = a * cos + b * sin;
    let nb = b * cos - a * sin;
    match axis {
        Axis::X => {
            m.y_axis = na;
            m.z_axis = nb
        }
        Axis::Y => {
            m.z_axis = na;
            m.x_axis = nb
        }
        Axis::Z => {
            m.x_axis = na;
            m.y_axis = nb
        }
    }
}
