use std::fmt;

use crate::rotation::Axis;

/// One of the six BVH channels, spelled as in the file.
///
/// Position channels are in file units; rotation channels are in degrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// Translation along X.
    Xposition,
    /// Translation along Y.
    Yposition,
    /// Translation along Z.
    Zposition,
    /// Rotation about X, degrees.
    Xrotation,
    /// Rotation about Y, degrees.
    Yrotation,
    /// Rotation about Z, degrees.
    Zrotation,
}

impl Channel {
    /// All six channels.
    pub const ALL: [Channel; 6] = [
        Channel::Xposition,
        Channel::Yposition,
        Channel::Zposition,
        Channel::Xrotation,
        Channel::Yrotation,
        Channel::Zrotation,
    ];

    /// The canonical spelling, as written by bvhkit.
    ///
    /// # Example
    /// ```
    /// assert_eq!(bvhkit::Channel::Zrotation.name(), "Zrotation");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Channel::Xposition => "Xposition",
            Channel::Yposition => "Yposition",
            Channel::Zposition => "Zposition",
            Channel::Xrotation => "Xrotation",
            Channel::Yrotation => "Yrotation",
            Channel::Zrotation => "Zrotation",
        }
    }

    /// Reads a channel name, ignoring ASCII case (`XROTATION`, `xRotation`).
    ///
    /// # Example
    /// ```
    /// use bvhkit::Channel;
    /// assert_eq!(Channel::from_name("yPosition"), Some(Channel::Yposition));
    /// assert_eq!(Channel::from_name("Wrotation"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Channel> {
        Channel::from_bytes(name.as_bytes())
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.name().as_bytes().eq_ignore_ascii_case(b))
    }

    /// The axis the channel moves or turns about.
    pub fn axis(self) -> Axis {
        match self {
            Channel::Xposition | Channel::Xrotation => Axis::X,
            Channel::Yposition | Channel::Yrotation => Axis::Y,
            Channel::Zposition | Channel::Zrotation => Axis::Z,
        }
    }

    /// Whether this is a rotation channel.
    pub fn is_rotation(self) -> bool {
        matches!(self, Channel::Xrotation | Channel::Yrotation | Channel::Zrotation)
    }

    /// Whether this is a position channel.
    pub fn is_position(self) -> bool {
        !self.is_rotation()
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
